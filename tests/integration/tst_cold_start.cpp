// A new user's first evaluation: the starting code of the first problem of every shipped target that is
// available here, through the real CLI (`autocomp eval --start --sandbox required`), from a cache and
// data directory made empty for this test. Every setup step (rooflines, judges, workers, extensions)
// runs for real inside the sandbox, as on a fresh machine: a file a step needs that the sandbox hides
// fails here, not on a user's machine. Targets that are absent (their tools are not installed) are
// skipped, saying why; a target whose hardware is absent must end in no_hardware, never in an error.
// Also: a target whose setup fails on purpose is reported by `autocomp eval` as the machine's problem.
#include "model/problem.h"
#include "model/repository.h"
#include "platform/sandbox.h"

#include <QDir>
#include <QDirIterator>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

using namespace autocomp;

class TestColdStart : public QObject
{
    Q_OBJECT

    QTemporaryDir m_home;

    struct Outcome {
        int exitCode = -1;
        QByteArray out;
        QByteArray err;
        QJsonObject json;
    };

    Outcome eval(const QStringList &arguments, const QMap<QString, QString> &extraEnv = {})
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        // Empty at the start of this test: nothing an earlier run built can be reused.
        env.insert(QStringLiteral("XDG_CACHE_HOME"), m_home.filePath(QStringLiteral("cache")));
        env.insert(QStringLiteral("XDG_DATA_HOME"), m_home.filePath(QStringLiteral("data")));
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), m_home.filePath(QStringLiteral("config")));
        for (auto it = extraEnv.cbegin(); it != extraEnv.cend(); ++it)
            env.insert(it.key(), it.value());
        QProcess process;
        process.setProcessEnvironment(env);
        process.start(qEnvironmentVariable("AUTOCOMP_CLI"), QStringList{QStringLiteral("eval")} + arguments + QStringList{QStringLiteral("--json")});
        Outcome o;
        if (!process.waitForFinished(900000)) {
            process.kill();
            process.waitForFinished();
        }
        o.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
        o.out = process.readAllStandardOutput();
        o.err = process.readAllStandardError();
        o.json = QJsonDocument::fromJson(o.out).object();
        return o;
    }

    static QByteArray describe(const Outcome &o)
    {
        return "exit " + QByteArray::number(o.exitCode) + "\nstdout:\n" + o.out.left(6000) + "\nstderr:\n" + o.err.right(4000);
    }

    int cachedFiles() const
    {
        int n = 0;
        for (QDirIterator it(m_home.filePath(QStringLiteral("cache")), QDir::Files, QDirIterator::Subdirectories); it.hasNext(); it.next())
            ++n;
        return n;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_home.isValid());
        for (const char *dir : {"cache", "data", "config"})
            QVERIFY(QDir().mkpath(m_home.filePath(QLatin1String(dir))));
        QVERIFY(!qEnvironmentVariable("AUTOCOMP_CLI").isEmpty());
        // The point of this test is the sandboxed path; a machine without it cannot say anything here.
        if (!Sandbox::available())
            QSKIP(qPrintable(QStringLiteral("the sandbox cannot run here: %1").arg(Sandbox::unavailableReason())));
    }

    void startCodeOfEveryAvailableTarget_data()
    {
        QTest::addColumn<QString>("target");
        QTest::addColumn<QString>("problem");
        Repository repository;
        for (const QString &name : repository.targetNames()) {
            const QStringList problems = repository.problemNames(name);
            if (!problems.isEmpty())
                QTest::newRow(qPrintable(name)) << name << problems.first();
        }
    }

    void startCodeOfEveryAvailableTarget()
    {
        QFETCH(QString, target);
        QFETCH(QString, problem);
        Repository repository;
        QString error;
        const auto t = repository.target(target, &error);
        QVERIFY2(t, qPrintable(error));
        // Checked in the same sandbox as the steps, so "available" means the steps can run.
        if (const QString absent = t->absenceReason(); !absent.isEmpty())
            QSKIP(qPrintable(absent));
        const bool noHardware = !t->hardwareAbsence().isEmpty();
        const int before = cachedFiles();
        const Outcome o = eval({QStringLiteral("--target"), target, QStringLiteral("--problem"), problem, QStringLiteral("--start"),
                                QStringLiteral("--sandbox"), QStringLiteral("required")});
        const QString status = o.json.value(QStringLiteral("status")).toString();
        if (noHardware) {
            QVERIFY2(status == QLatin1String("no_hardware"), describe(o).constData());
        } else {
            QVERIFY2(status == QLatin1String("ok") && o.json.value(QStringLiteral("correct")).toBool(), describe(o).constData());
            QCOMPARE(o.exitCode, 0);
        }
        for (const QJsonValue flag : o.json.value(QStringLiteral("flags")).toArray())
            QVERIFY2(!flag.toString().startsWith(QLatin1String("unsandboxed")), qPrintable(flag.toString()));
        // Cold: the target's setup ran here and filled the (empty) cache; nothing was found ready.
        if (!t->setupSteps.isEmpty()) {
            QVERIFY2(o.err.contains(QByteArray("setup of " + target.toUtf8() + "/")), describe(o).constData());
            QVERIFY2(cachedFiles() > before, "the setup wrote its products into this test's own cache");
        }
        qInfo().noquote() << target << problem << status << "from a cold cache";
    }

    // A target whose setup step fails on purpose (tests/support/fake_data/backends/fake-broken-start:
    // its tool includes a header that is not there): `error`, exit 1, never a verdict about the code,
    // and the message names the step, says it is the machine's, and keeps the compiler's output.
    void failedSetupIsTheMachines()
    {
        const Outcome o = eval({QStringLiteral("--target"), QStringLiteral("fake-broken-start"), QStringLiteral("--problem"), QStringLiteral("kernel"),
                                QStringLiteral("--start")},
                               {{QStringLiteral("AUTOCOMP_DATA_DIR"), qEnvironmentVariable("AUTOCOMP_FAKE_DATA")}});
        QCOMPARE(o.json.value(QStringLiteral("status")).toString(), QStringLiteral("error"));
        QCOMPARE(o.exitCode, 1);
        const QString log = o.json.value(QStringLiteral("log")).toString();
        QVERIFY2(log.contains(QStringLiteral("its step 'build_tool'")), qPrintable(log));
        QVERIFY2(log.contains(QStringLiteral("problem of this machine")), qPrintable(log));
        QVERIFY2(log.contains(QStringLiteral("absent_header.h")), qPrintable(log));
        QVERIFY2(!log.contains(QStringLiteral("compile_error")), qPrintable(log));
    }
};

QTEST_GUILESS_MAIN(TestColdStart)
#include "tst_cold_start.moc"
