// An API key stored in the real keychain (gnome-keyring on a private bus, tests/support/with-keyring.sh)
// reaches the LLM server in the Authorization header and nowhere else: not the store (any table, nor the
// raw bytes of the SQLite file and its WAL), not the CLI's output, not an export.
#include "fake_llm_server.h"

#include <QDir>
#include <QProcess>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QSqlRecord>
#include <QTemporaryDir>
#include <QtTest>

using namespace autocomp;

class TestKeySecrecy : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    test::FakeLlmServer m_server;
    QByteArray m_key;

    QProcessEnvironment environment() const
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove(QStringLiteral("VLLM_API_KEY")); // the key must come from the keychain
        env.insert(QStringLiteral("AUTOCOMP_DATA_DIR"), qEnvironmentVariable("AUTOCOMP_FAKE_DATA"));
        env.insert(QStringLiteral("VLLM_API_BASE"), m_server.baseUrl().toString() + QStringLiteral("/v1"));
        return env;
    }

    struct Output
    {
        int exitCode = -1;
        QByteArray out;
        QByteArray err;
    };

    // Runs the CLI while this thread's event loop keeps the in-process server answering.
    Output runCli(const QStringList &args, const QByteArray &input = {})
    {
        QProcess process;
        process.setProcessEnvironment(environment());
        QSignalSpy finished(&process, &QProcess::finished);
        process.start(qEnvironmentVariable("AUTOCOMP_CLI"), args);
        if (!process.waitForStarted())
            return {};
        if (!input.isEmpty())
            process.write(input);
        process.closeWriteChannel();
        QElapsedTimer clock;
        clock.start();
        while (finished.isEmpty() && clock.elapsed() < 240000)
            finished.wait(50);
        if (finished.isEmpty())
            process.kill();
        process.waitForFinished(5000);
        return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1, process.readAllStandardOutput(),
                process.readAllStandardError()};
    }

    // The whole key and its random tail (a truncated key is still a leak).
    bool leaks(const QByteArray &data) const { return data.contains(m_key) || data.contains(m_key.right(16)); }

private Q_SLOTS:
    void initTestCase()
    {
        if (!qEnvironmentVariableIsSet("AUTOCOMP_TEST_KEYRING"))
            QSKIP("needs a keyring: run through tests/support/with-keyring.sh (ctest does)");
        QVERIFY(m_dir.isValid());
        QVERIFY(m_server.listen());
        QString error;
        QVERIFY2(m_server.loadScriptText(
                     "rules:\n"
                     "  - name: plan\n    match: 'Plan:\\s*$'\n    cycle: true\n    responses:\n"
                     "      - content: \"Chosen optimization: 1. tile\\nApply it.\"\n"
                     "  - name: code\n    match: 'Optimized code:\\s*$'\n    cycle: true\n    responses:\n"
                     "      - content: \"```cpp\\n// fake: status=ok latency_ms=50;\\nvoid kernel() {}\\n```\"\n",
                     m_dir.path(), &error),
                 qPrintable(error));
        m_key = "sk-canary-" + QByteArray::number(QRandomGenerator::global()->generate64(), 16)
            + QByteArray::number(QRandomGenerator::global()->generate64(), 16);
    }

    void keyReachesOnlyTheServer()
    {
        const Output set = runCli({QStringLiteral("keys"), QStringLiteral("set"), QStringLiteral("vllm")},
                                  m_key + '\n');
        QVERIFY2(set.exitCode == 0, set.err.constData());
        QVERIFY(!leaks(set.out + set.err));
        const Output list = runCli({QStringLiteral("keys"), QStringLiteral("list")});
        QCOMPARE(list.exitCode, 0);
        QVERIFY2(list.out.contains("vllm        stored"), list.out.constData());
        QVERIFY(!leaks(list.out + list.err));

        const QString config = m_dir.filePath(QStringLiteral("run.yaml"));
        QFile file(config);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("target: fake\nproblem: kernel\nagent: fake\nmodels: {plan: [\"vllm::m\"]}\n"
                   "search: {iterations: 1, beam_width: 1, plans_per_parent: 1, code_per_plan: 1, seed: 1}\n");
        file.close();
        const QString storePath = m_dir.filePath(QStringLiteral("store.sqlite"));
        const Output run = runCli(
            {QStringLiteral("run"), config, QStringLiteral("--store"), storePath, QStringLiteral("--json")});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        const QByteArray keyLine = "vllm::m at " + m_server.baseUrl().toString().toUtf8()
            + "/v1: API key from the keychain";
        QVERIFY2(run.err.contains(keyLine), run.err.constData());
        QVERIFY2(!leaks(run.out), run.out.constData());
        QVERIFY2(!leaks(run.err), run.err.constData());

        // The server did get it: otherwise this test could not tell a leak-proof client from one that never sends it.
        QVERIFY(m_server.requestCount() >= 2);
        for (const auto &request : m_server.requests())
            QCOMPARE(request.header("authorization"), "Bearer " + m_key);

        // Raw bytes of the store and whatever WAL/journal it left.
        const QDir dir(m_dir.path());
        int files = 0;
        for (const QString &name : dir.entryList({QStringLiteral("store.sqlite*")}, QDir::Files)) {
            QFile f(dir.filePath(name));
            QVERIFY(f.open(QIODevice::ReadOnly));
            QVERIFY2(!leaks(f.readAll()), qPrintable(name));
            ++files;
        }
        QVERIFY(files >= 1);

        // Every row of every table, decoded.
        qint64 runId = 0;
        {
            QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("secrecy"));
            db.setDatabaseName(storePath);
            QVERIFY(db.open());
            QSqlQuery tables(QStringLiteral("SELECT name FROM sqlite_master WHERE type = 'table'"), db);
            int rows = 0;
            while (tables.next()) {
                const QString table = tables.value(0).toString();
                QSqlQuery all(db);
                QVERIFY(all.exec(QStringLiteral("SELECT * FROM \"%1\"").arg(table)));
                while (all.next()) {
                    ++rows;
                    for (int c = 0; c < all.record().count(); ++c) {
                        const QVariant v = all.value(c);
                        QVERIFY2(!leaks(v.toByteArray()) && !leaks(v.toString().toUtf8()),
                                 qPrintable(QStringLiteral("%1.%2").arg(table, all.record().fieldName(c))));
                    }
                }
            }
            QVERIFY(rows > 0);
            QSqlQuery run(QStringLiteral("SELECT max(id) FROM runs"), db);
            QVERIFY(run.next());
            runId = run.value(0).toLongLong();
        }
        QSqlDatabase::removeDatabase(QStringLiteral("secrecy"));
        QVERIFY(runId > 0);

        const QString archive = m_dir.filePath(QStringLiteral("run.jsonl"));
        const Output exported = runCli({QStringLiteral("export"), QString::number(runId), QStringLiteral("--format"),
                                        QStringLiteral("jsonl"), QStringLiteral("--out"), archive,
                                        QStringLiteral("--store"), storePath});
        QVERIFY2(exported.exitCode == 0, exported.err.constData());
        QFile jsonl(archive);
        QVERIFY(jsonl.open(QIODevice::ReadOnly));
        const QByteArray archived = jsonl.readAll();
        QVERIFY2(archived.contains("vllm::m"), "the archive holds the run's LLM calls");
        QVERIFY(!leaks(archived));
        QVERIFY(!leaks(exported.out + exported.err));

        const Output shown = runCli({QStringLiteral("runs"), QStringLiteral("show"), QString::number(runId),
                                     QStringLiteral("--json"), QStringLiteral("--store"), storePath});
        QCOMPARE(shown.exitCode, 0);
        QVERIFY(!leaks(shown.out + shown.err));

        const Output removed = runCli({QStringLiteral("keys"), QStringLiteral("delete"), QStringLiteral("vllm")});
        QCOMPARE(removed.exitCode, 0);
    }
};

QTEST_GUILESS_MAIN(TestKeySecrecy)
#include "tst_key_secrecy.moc"
