// Reliability as a user meets it: the real CLI, the local LLM server, the fake target and a real SQLite
// store, under the faults of issue #14: a full disk, stop/SIGTERM/SIGINT with requests in flight, two
// resumes at once, endless and huge answers, truncated, corrupt and killed imports, read-only and missing
// stores, bad configurations, and the exit status of each outcome.
#include "reliability_harness.h"

#include <QRandomGenerator>
#include <QRegularExpression>
#include <QStandardPaths>

#include <csignal>

using namespace autocomp;
using namespace autocomp::test;

class TestReliability : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_config;
    QString m_referenceStore;
    QStringList m_referenceBeam;
    double m_referenceBest = 0;
    int m_referenceRequests = 0;

    QString path(const QString &name) const { return m_dir.filePath(name); }

    static bool isRoot() { return ::geteuid() == 0; }

    bool startServer(FakeLlmServer &server, const QByteArray &script)
    {
        QString error;
        if (!server.listen() || !server.loadScriptText(script, m_dir.path(), &error)) {
            qWarning() << "fake server:" << error;
            return false;
        }
        return true;
    }

    // The uninterrupted run every interrupted one must end up equal to.
    void checkSameAsReference(const QString &storePath, qint64 runId, const FakeLlmServer &server)
    {
        QString error;
        auto store = RunStore::open(storePath, &error);
        QVERIFY2(store, qPrintable(error));
        const RunInfo run = *store->run(runId);
        QCOMPARE(toString(run.state), QStringLiteral("finished"));
        QCOMPARE(beamCodes(*store, runId), m_referenceBeam);
        QCOMPARE(run.bestScore, m_referenceBest);
        const QString problems = storedRunProblems(*store, runId);
        QVERIFY2(problems.isEmpty(), qPrintable(problems));
        const QString repeats = repeatedRequests(*store, runId, server);
        QVERIFY2(repeats.isEmpty(), qPrintable(repeats));
        QCOMPARE(integrity(storePath), QStringLiteral("ok"));
    }

    int codeRequestsSeen(const FakeLlmServer &server) const
    {
        int n = 0;
        for (const RecordedRequest &r : server.requests())
            n += r.ruleName.startsWith(QLatin1String("code-"));
        return n;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_config = path(QStringLiteral("run.yaml"));
        QVERIFY(writeFile(m_config, runConfig()));
        FakeLlmServer server;
        QVERIFY(startServer(server, deterministicScript()));
        m_referenceStore = path(QStringLiteral("reference.sqlite"));
        const CliResult r = runCli({QStringLiteral("run"), m_config, QStringLiteral("--store"), m_referenceStore},
                                   server);
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        QString error;
        auto store = RunStore::open(m_referenceStore, &error);
        QVERIFY2(store, qPrintable(error));
        const RunInfo run = store->runs().first();
        QCOMPARE(toString(run.state), QStringLiteral("finished"));
        m_referenceBeam = beamCodes(*store, run.id);
        m_referenceBest = run.bestScore;
        m_referenceRequests = server.requestCount();
        QVERIFY(!m_referenceBeam.isEmpty());
        QVERIFY(m_referenceRequests >= 12);
        // Each model is used for plans and code; where its key comes from is said once.
        QCOMPARE(countOf(r.err, QStringLiteral("autocomp: vllm::m1 at")), 1);
        QCOMPARE(countOf(r.err, QStringLiteral("autocomp: vllm::m2 at")), 1);
    }

    // The store on a 400 KB tmpfs: the run pauses with the real reason, nothing acts on what was not stored,
    // and once there is room `resume` ends with the uninterrupted run's beam, paying nothing twice.
    void diskFullPausesAndResumeLosesNothing()
    {
        if (!isRoot())
            QSKIP("mounting a small tmpfs needs root");
        Tmpfs tmpfs;
        const QString mountPoint = path(QStringLiteral("small"));
        if (!tmpfs.mount(mountPoint, QStringLiteral("400k")))
            QSKIP(qPrintable(QStringLiteral("cannot mount a tmpfs here: ") + tmpfs.error()));
        // Large plans fill the disk within the first iteration (they are stored in calls, candidates and prompts).
        const QByteArray script = deterministicScript(CodeAnswers::Normal, 30000);
        FakeLlmServer reference;
        QVERIFY(startServer(reference, script));
        const QString referenceStore = path(QStringLiteral("padded-reference.sqlite"));
        const CliResult ref = runCli({QStringLiteral("run"), m_config, QStringLiteral("--store"), referenceStore},
                                     reference);
        QVERIFY2(ref.exitCode == 0, qPrintable(describe(ref)));

        FakeLlmServer server;
        QVERIFY(startServer(server, script));
        const QString storePath = mountPoint + QStringLiteral("/runs.sqlite");
        const CliResult full = runCli({QStringLiteral("run"), m_config, QStringLiteral("--store"), storePath}, server);
        QVERIFY2(full.exitCode == 4, qPrintable(describe(full)));
        QVERIFY2(full.err.contains(QLatin1String("disk full: ")), qPrintable(describe(full)));
        QVERIFY2(full.out.contains(QLatin1String("paused")) && full.out.contains(QLatin1String("disk full")),
                 qPrintable(describe(full)));
        QVERIFY2(!full.err.contains(QLatin1String("FOREIGN KEY")), qPrintable(describe(full)));
        QVERIFY2(!full.out.contains(QLatin1String("finished")), qPrintable(describe(full)));

        const CliResult list = runCli(
            {QStringLiteral("runs"), QStringLiteral("list"), QStringLiteral("--store"), storePath}, server);
        QVERIFY2(list.exitCode == 0, qPrintable(describe(list)));
        QVERIFY2(!list.out.contains(QLatin1String("finished")) && !list.out.contains(QLatin1String("running")),
                 qPrintable(describe(list)));

        QVERIFY2(tmpfs.remount(QStringLiteral("size=64m")), qPrintable(tmpfs.error()));
        const CliResult resumed = runCli(
            {QStringLiteral("resume"), QStringLiteral("1"), QStringLiteral("--store"), storePath}, server);
        QVERIFY2(resumed.exitCode == 0, qPrintable(describe(resumed)));

        QString error;
        auto refStore = RunStore::open(referenceStore, &error);
        QVERIFY(refStore);
        auto store = RunStore::open(storePath, &error);
        QVERIFY2(store, qPrintable(error));
        const RunInfo run = *store->run(1);
        QCOMPARE(toString(run.state), QStringLiteral("finished"));
        QCOMPARE(beamCodes(*store, 1), beamCodes(*refStore, refStore->runs().first().id));
        QCOMPARE(run.bestScore, refStore->runs().first().bestScore);
        const QString problems = storedRunProblems(*store, 1);
        QVERIFY2(problems.isEmpty(), qPrintable(problems));
        const QString repeats = repeatedRequests(*store, 1, server);
        QVERIFY2(repeats.isEmpty(), qPrintable(repeats));
        store.reset();
        QCOMPARE(integrity(storePath), QStringLiteral("ok"));
    }

    // Stop, SIGTERM and Ctrl-C while code requests are in flight: the run ends stopped (exit 4), the
    // requests cut off are unconfirmed calls (not failed candidates), and resume redoes exactly them.
    void stopLeavesInFlightWorkUndone_data()
    {
        QTest::addColumn<QString>("how");
        QTest::newRow("SIGTERM") << QStringLiteral("term");
        QTest::newRow("SIGINT") << QStringLiteral("int");
        QTest::newRow("autocomp stop") << QStringLiteral("stop");
    }

    void stopLeavesInFlightWorkUndone()
    {
        QFETCH(QString, how);
        FakeLlmServer server;
        // Code answers never come: whatever code request was sent is in flight when the stop lands.
        QVERIFY(startServer(server, deterministicScript(CodeAnswers::Hang)));
        const QString storePath = path(QStringLiteral("stop-%1.sqlite").arg(how));
        CliResult stopCommand;
        const CliResult run = runCli(
            {QStringLiteral("run"), m_config, QStringLiteral("--store"), storePath}, server, [&](QProcess &p) {
                if (codeRequestsSeen(server) < 4)
                    return false;
                if (how == QLatin1String("term"))
                    ::kill(pid_t(p.processId()), SIGTERM);
                else if (how == QLatin1String("int"))
                    ::kill(pid_t(p.processId()), SIGINT);
                else
                    stopCommand = runCli(
                        {QStringLiteral("stop"), QStringLiteral("1"), QStringLiteral("--store"), storePath}, server);
                return true;
            });
        QVERIFY2(run.exitCode == 4, qPrintable(describe(run)));
        QVERIFY2(run.out.contains(QLatin1String("stopped")), qPrintable(describe(run)));
        if (how == QLatin1String("stop")) {
            QVERIFY2(stopCommand.exitCode == 0, qPrintable(describe(stopCommand)));
            QVERIFY2(stopCommand.out.contains(QLatin1String("run 1 stopped")), qPrintable(describe(stopCommand)));
        }
        {
            QString error;
            auto store = RunStore::open(storePath, &error);
            QVERIFY2(store, qPrintable(error));
            QCOMPARE(toString(store->run(1)->state), QStringLiteral("stopped"));
            const QString problems = storedRunProblems(*store, 1);
            QVERIFY2(problems.isEmpty(), qPrintable(problems));
            QVERIFY(store->unconfirmedCalls(1).size() >= 4);
        }
        const CliResult show = runCli(
            {QStringLiteral("runs"), QStringLiteral("show"), QStringLiteral("1"), QStringLiteral("--store"), storePath},
            server);
        QVERIFY2(show.out.contains(QLatin1String("unconfirmed: ")), qPrintable(describe(show)));

        // Answers come now; the resumed run redoes what was cut off and ends as the uninterrupted one.
        QString error;
        QVERIFY(server.loadScriptText(deterministicScript(), m_dir.path(), &error));
        const CliResult resumed = runCli(
            {QStringLiteral("resume"), QStringLiteral("1"), QStringLiteral("--store"), storePath}, server);
        QVERIFY2(resumed.exitCode == 0, qPrintable(describe(resumed)));
        checkSameAsReference(storePath, 1, server);
    }

    // A run is driven by one process: a second resume names the holder; a dead holder's lease is taken over;
    // `runs list` says interrupted for a run whose process is gone; `stop` works on a paused run.
    void oneProcessDrivesARun()
    {
        FakeLlmServer server;
        QVERIFY(startServer(server, deterministicScript(CodeAnswers::Hang)));
        const QString storePath = path(QStringLiteral("lease.sqlite"));
        const QStringList store{QStringLiteral("--store"), storePath};
        const QStringList list = QStringList{QStringLiteral("runs"), QStringLiteral("list")} + store;
        const CliResult killed = runCli(QStringList{QStringLiteral("run"), m_config} + store, server, [&](QProcess &p) {
            if (codeRequestsSeen(server) < 2)
                return false;
            ::kill(pid_t(p.processId()), SIGKILL);
            return true;
        });
        QVERIFY(!killed.finished);
        CliResult r = runCli(list, server);
        QVERIFY2(r.out.contains(QLatin1String("interrupted")) && !r.out.contains(QLatin1String("running")),
                 qPrintable(describe(r)));
        // The code requests it had sent were billed perhaps, answered never: shown apart, with an estimate.
        r = runCli(QStringList{QStringLiteral("runs"), QStringLiteral("show"), QStringLiteral("1")} + store, server);
        QVERIFY2(r.out.contains(QLatin1String("interrupted")) && r.out.contains(QLatin1String("unconfirmed: ")),
                 qPrintable(describe(r)));
        QVERIFY2(r.out.contains(QStringLiteral("last driven by (gone) pid %1").arg(killed.pid)),
                 qPrintable(describe(r)));

        // Resume A drives the run (its requests hang, so it keeps running); resume B is refused, naming A.
        const int before = server.requestCount();
        CliResult second;
        CliResult listWhileDriven;
        const CliResult first = runCli(
            QStringList{QStringLiteral("resume"), QStringLiteral("1")} + store, server, [&](QProcess &p) {
                if (server.requestCount() == before)
                    return false;
                listWhileDriven = runCli(list, server);
                second = runCli(QStringList{QStringLiteral("resume"), QStringLiteral("1")} + store, server);
                ::kill(pid_t(p.processId()), SIGKILL);
                return true;
            });
        QVERIFY(!first.finished);
        QVERIFY2(second.exitCode == 1, qPrintable(describe(second)));
        QVERIFY2(second.err.contains(QStringLiteral("already being driven by pid %1 on ").arg(first.pid)),
                 qPrintable(describe(second)));
        QVERIFY2(listWhileDriven.out.contains(QLatin1String("running")), qPrintable(describe(listWhileDriven)));
        r = runCli(list, server);
        QVERIFY2(r.out.contains(QLatin1String("interrupted")), qPrintable(describe(r)));

        // Two resumes started at the same moment: exactly one drives the run, the other names it and exits 1.
        {
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert(QStringLiteral("AUTOCOMP_DATA_DIR"), qEnvironmentVariable("AUTOCOMP_FAKE_DATA"));
            env.insert(QStringLiteral("VLLM_API_BASE"), server.baseUrl().toString() + QStringLiteral("/v1"));
            env.insert(QStringLiteral("VLLM_API_KEY"), QStringLiteral("test-key"));
            QProcess a, b;
            for (QProcess *p : {&a, &b}) {
                p->setProcessEnvironment(env);
                p->start(qEnvironmentVariable("AUTOCOMP_CLI"),
                         QStringList{QStringLiteral("resume"), QStringLiteral("1")} + store);
            }
            QVERIFY(a.waitForStarted() && b.waitForStarted());
            QSignalSpy aDone(&a, &QProcess::finished);
            QSignalSpy bDone(&b, &QProcess::finished);
            while (aDone.isEmpty() && bDone.isEmpty())
                QTest::qWait(20);
            QProcess &refused = aDone.isEmpty() ? b : a;
            QProcess &driver = aDone.isEmpty() ? a : b;
            const QString err = QString::fromUtf8(refused.readAllStandardError());
            QVERIFY2(refused.exitCode() == 1
                         && err.contains(QStringLiteral("already being driven by pid %1 on ").arg(driver.processId())),
                     qPrintable(err));
            QCOMPARE(driver.state(), QProcess::Running);
            ::kill(pid_t(driver.processId()), SIGKILL);
            QVERIFY(driver.waitForFinished());
        }

        // Nobody drives it: pause and stop are recorded at once, and a stopped run still resumes.
        r = runCli(QStringList{QStringLiteral("pause"), QStringLiteral("1")} + store, server);
        QVERIFY2(r.exitCode == 0 && r.out.contains(QLatin1String("run 1 paused")), qPrintable(describe(r)));
        r = runCli(QStringList{QStringLiteral("stop"), QStringLiteral("1")} + store, server);
        QVERIFY2(r.exitCode == 0 && r.out.contains(QLatin1String("run 1 stopped")), qPrintable(describe(r)));

        QString error;
        QVERIFY(server.loadScriptText(deterministicScript(), m_dir.path(), &error));
        const CliResult resumed = runCli(QStringList{QStringLiteral("resume"), QStringLiteral("1")} + store, server);
        QVERIFY2(resumed.exitCode == 0, qPrintable(describe(resumed)));
        checkSameAsReference(storePath, 1, server);
    }

    // Requests in flight at a kill to a paid model: their likely cost is estimated from the price table and
    // shown apart from the confirmed totals.
    void unconfirmedCostIsEstimated()
    {
        FakeLlmServer server;
        QVERIFY(startServer(server, deterministicScript(CodeAnswers::Hang)));
        const QString config = path(QStringLiteral("paid.yaml"));
        QVERIFY(writeFile(config, runConfig(3).replace("vllm::m1\", \"vllm::m2", "openai::gpt-5.2")));
        QProcessEnvironment env;
        env.insert(QStringLiteral("OPENAI_BASE_URL"), server.baseUrl().toString() + QStringLiteral("/v1"));
        env.insert(QStringLiteral("OPENAI_API_KEY"), QStringLiteral("test-key"));
        const QString storePath = path(QStringLiteral("paid.sqlite"));
        const CliResult killed = runCli(
            {QStringLiteral("run"), config, QStringLiteral("--store"), storePath}, server,
            [&](QProcess &p) {
                if (codeRequestsSeen(server) < 2)
                    return false;
                ::kill(pid_t(p.processId()), SIGKILL);
                return true;
            },
            env);
        QVERIFY(!killed.finished);
        const CliResult show = runCli({QStringLiteral("runs"), QStringLiteral("show"), QStringLiteral("1"),
                                       QStringLiteral("--json"), QStringLiteral("--store"), storePath},
                                      server);
        QVERIFY2(show.exitCode == 0, qPrintable(describe(show)));
        const QJsonObject o = QJsonDocument::fromJson(show.out.toUtf8()).object();
        QCOMPARE(o.value(QStringLiteral("display_state")).toString(), QStringLiteral("interrupted"));
        const QJsonArray calls = o.value(QStringLiteral("unconfirmed_calls")).toArray();
        QVERIFY(calls.size() >= 2);
        double sum = 0;
        for (const QJsonValue &v : calls) {
            QVERIFY2(v.toObject().value(QStringLiteral("estimated_usd")).toDouble() > 0,
                     qPrintable(QString::fromUtf8(QJsonDocument(v.toObject()).toJson())));
            QCOMPARE(v.toObject().value(QStringLiteral("model")).toString(), QStringLiteral("openai::gpt-5.2"));
            sum += v.toObject().value(QStringLiteral("estimated_usd")).toDouble();
        }
        QCOMPARE(o.value(QStringLiteral("unconfirmed_usd_estimate")).toDouble(), sum);
        // The confirmed total is the answered calls' cost only.
        QString error;
        auto store = RunStore::open(storePath, &error);
        QVERIFY2(store, qPrintable(error));
        double confirmed = 0;
        for (const LlmCall &c : store->llmCalls(1))
            if (c.status == QLatin1String("ok"))
                confirmed += c.usd;
        QVERIFY(confirmed > 0);
        QCOMPARE(store->run(1)->usd, confirmed);
    }

    // An endless stream and a huge answer are cut off at llm.max_answer_bytes and recorded as failed calls
    // with the reason; a huge plan under the answer limit never becomes a prompt past llm.max_prompt_bytes.
    void answerAndPromptLimits_data()
    {
        QTest::addColumn<QString>("fault");
        QTest::newRow("endless stream") << QStringLiteral("endless");
        QTest::newRow("huge answer") << QStringLiteral("huge");
        QTest::newRow("huge plan, prompt limit") << QStringLiteral("prompt");
    }

    void answerAndPromptLimits()
    {
        QFETCH(QString, fault);
        const int limit = 65536;
        QByteArray script = "rules:\n  - name: plan\n    match: 'Plan:\\s*$'\n    cycle: true\n    responses:\n";
        if (fault == QLatin1String("endless")) {
            script +=
                "      - {content: \"Chosen optimization: 1. alpha: tile the loops\\nApply it. \", fault: endless}\n";
        } else {
            // 2 MB past the answer limit, or 200 KB: under the answer limit, over the prompt limit.
            const QByteArray plan = "Chosen optimization: 1. alpha: tile the loops\n"
                + QByteArray(fault == QLatin1String("huge") ? 2000000 : 200000, 'p');
            QVERIFY(writeFile(path(QStringLiteral("plan-%1.txt").arg(fault)), plan));
            script += "      - {content_file: plan-" + fault.toUtf8() + ".txt}\n";
        }
        script += "  - name: code\n    match: 'Optimized code:\\s*$'\n    cycle: true\n    responses:\n"
                  "      - content: \"```cpp\\n// fake: status=ok latency_ms=90;\\nvoid kernel() {}\\n```\"\n";
        FakeLlmServer server;
        QVERIFY(startServer(server, script));
        const QString config = path(QStringLiteral("limits-%1.yaml").arg(fault));
        const QByteArray llm = fault == QLatin1String("prompt")
            ? "llm: {max_prompt_bytes: " + QByteArray::number(limit) + "}\n"
            : "llm: {max_answer_bytes: " + QByteArray::number(limit) + "}\n";
        QVERIFY(writeFile(config, runConfig(1, llm)));
        const QString storePath = path(QStringLiteral("limits-%1.sqlite").arg(fault));
        const CliResult r = runCli({QStringLiteral("run"), config, QStringLiteral("--store"), storePath}, server);
        // Every call failed (or was refused): the run failed, exit 3, and says why.
        QVERIFY2(r.exitCode == 3, qPrintable(describe(r)));
        const QString reason = fault == QLatin1String("prompt") ? QStringLiteral("llm.max_prompt_bytes")
                                                                : QStringLiteral("llm.max_answer_bytes");
        QVERIFY2(r.out.contains(reason), qPrintable(describe(r)));

        QString error;
        auto store = RunStore::open(storePath, &error);
        QVERIFY2(store, qPrintable(error));
        int limited = 0;
        for (const LlmCall &call : store->llmCalls(1)) {
            // Past the answer limit nothing of the answer is kept; under it (the prompt row) the paid plan is kept
            // whole.
            if (fault != QLatin1String("prompt"))
                QVERIFY2(call.response.size() <= limit, qPrintable(call.error));
            limited += call.status == QLatin1String("error") && call.error.contains(reason);
        }
        QVERIFY(limited >= 1);
        for (const RecordedRequest &req : server.requests())
            QVERIFY2(req.body.size() < 2 * limit, "nothing past a limit is forwarded to the server");
        for (const Candidate &c : store->candidates(1))
            if (c.origin != CandidateOrigin::Root)
                QVERIFY2(c.status == CandidateStatus::Failed && c.error.contains(reason), qPrintable(c.error));
    }

    // Import is one transaction checked against the export's end record: a truncated or damaged file imports
    // nothing and says where it broke; a killed import leaves nothing half done.
    void importIsWholeOrNothing()
    {
        FakeLlmServer server;
        QVERIFY(startServer(server, deterministicScript()));
        const QString archive = path(QStringLiteral("reference.jsonl"));
        CliResult r = runCli({QStringLiteral("export"), QStringLiteral("1"), QStringLiteral("--format"),
                              QStringLiteral("jsonl"), QStringLiteral("--out"), archive, QStringLiteral("--store"),
                              m_referenceStore},
                             server);
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        QFile file(archive);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = file.readAll().split('\n');
        file.close();
        QVERIFY(lines.size() > 10);
        QVERIFY(lines.at(lines.size() - 2).contains("\"type\":\"end\""));

        const QString target = path(QStringLiteral("imports.sqlite"));
        const QStringList store{QStringLiteral("--store"), target};
        auto runCount = [&] {
            QString error;
            auto s = RunStore::open(target, &error);
            return s ? int(s->runs().size()) : -1;
        };
        struct Broken
        {
            QString name;
            QByteArray data;
            QString where;
        };
        const int corruptLine = int(lines.size() / 2);
        QList<QByteArray> corruptLines = lines;
        corruptLines[corruptLine - 1] =
            corruptLines.at(corruptLine - 1).left(corruptLines.at(corruptLine - 1).size() / 2);
        // An evaluation step goes missing (nothing else refers to one): only the end record's counts tell.
        QList<QByteArray> missingLine = lines;
        const qsizetype missingStep = [&] {
            for (qsizetype i = corruptLine - 1; i < lines.size(); ++i)
                if (lines.at(i).contains("\"type\":\"step\""))
                    return i;
            return qsizetype(corruptLine - 1);
        }();
        missingLine.removeAt(missingStep);
        const QList<Broken> broken{
            {QStringLiteral("first3"), lines.mid(0, 3).join('\n') + '\n',
             QStringLiteral(":3: the file ends without its end record")},
            {QStringLiteral("corrupt"), corruptLines.join('\n'), QStringLiteral(":%1: invalid JSON").arg(corruptLine)},
            {QStringLiteral("missing"), missingLine.join('\n'), QStringLiteral("the end record counts")},
        };
        r = runCli(QStringList{QStringLiteral("import"), archive} + store, server);
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        QCOMPARE(runCount(), 1);
        for (const Broken &b : broken) {
            const QString brokenPath = path(b.name + QStringLiteral(".jsonl"));
            QVERIFY(writeFile(brokenPath, b.data));
            r = runCli(QStringList{QStringLiteral("import"), brokenPath} + store, server);
            QVERIFY2(r.exitCode == 1, qPrintable(describe(r)));
            QVERIFY2(r.err.contains(b.where) && r.err.contains(QLatin1String("nothing was imported")),
                     qPrintable(b.name + describe(r)));
            QCOMPARE(runCount(), 1);
        }

        // A big archive, and imports killed at random moments: each leaves the whole run or nothing.
        QList<QByteArray> big;
        big << lines.first();
        qint64 candidates = 0, steps = 0, calls = 0;
        // Steps repeat freely (they only reference candidates), which makes the archive large and slow to import.
        for (const QByteArray &line : lines.mid(1)) {
            if (line.isEmpty() || line.contains("\"type\":\"end\""))
                continue;
            const int copies = line.contains("\"type\":\"step\"") ? 400 : 1;
            for (int i = 0; i < copies; ++i)
                big << line;
            candidates += line.contains("\"type\":\"candidate\"");
            steps += line.contains("\"type\":\"step\"") ? copies : 0;
            calls += line.contains("\"type\":\"llm_call\"");
        }
        double usd = 0;
        for (const QByteArray &line : lines)
            if (line.contains("\"type\":\"llm_call\""))
                usd += QJsonDocument::fromJson(line).object().value(QStringLiteral("usd")).toDouble();
        const QByteArray end = QJsonDocument(QJsonObject{{QStringLiteral("type"), QStringLiteral("end")},
                                                         {QStringLiteral("lines"), qint64(big.size())},
                                                         {QStringLiteral("candidates"), candidates},
                                                         {QStringLiteral("steps"), steps},
                                                         {QStringLiteral("llm_calls"), calls},
                                                         {QStringLiteral("llm_usd"), usd}})
                                   .toJson(QJsonDocument::Compact);
        const QString bigPath = path(QStringLiteral("big.jsonl"));
        QVERIFY(writeFile(bigPath, big.join('\n') + '\n' + end + '\n'));
        int complete = 1;
        for (int attempt = 0; attempt < 6; ++attempt) {
            const int delayMs = int(QRandomGenerator::global()->bounded(30, 600));
            QElapsedTimer clock;
            clock.start();
            r = runCli(QStringList{QStringLiteral("import"), bigPath} + store, server, [&](QProcess &p) {
                if (clock.elapsed() < delayMs)
                    return false;
                ::kill(pid_t(p.processId()), SIGKILL);
                return true;
            });
            QString error;
            auto s = RunStore::open(target, &error);
            QVERIFY2(s, qPrintable(error));
            const QList<RunInfo> runs = s->runs();
            QVERIFY(runs.size() == complete || runs.size() == complete + 1);
            // An import that ran to its end added the run; one killed first added all of it or nothing.
            if (r.finished)
                QVERIFY2(r.exitCode == 0 && runs.size() == complete + 1, qPrintable(describe(r)));
            if (runs.size() == complete + 1) {
                ++complete;
                QCOMPARE(s->candidates(runs.last().id).size(), candidates);
                QCOMPARE(s->llmCalls(runs.last().id).size(), calls);
                int stored = 0;
                for (const Candidate &c : s->candidates(runs.last().id))
                    stored += int(s->evaluationSteps(c.id).size());
                QCOMPARE(stored, steps);
            }
        }
        QCOMPARE(integrity(target), QStringLiteral("ok"));
    }

    // Exit statuses as documented: 2 usage, 3 every call failed or the starting code is wrong (0 and 4 are
    // checked by the runs above).
    void exitCodes()
    {
        FakeLlmServer server;
        QVERIFY(startServer(server,
                            "rules:\n  - name: refuse\n    match: '.'\n    cycle: true\n    responses:\n"
                            "      - {status: 400, error_message: \"model not found\"}\n"));
        CliResult r = runCli({QStringLiteral("run")}, server);
        QCOMPARE(r.exitCode, 2);
        r = runCli({QStringLiteral("resume"), QStringLiteral("one")}, server);
        QCOMPARE(r.exitCode, 2);
        r = runCli({QStringLiteral("runs"), QStringLiteral("list"), QStringLiteral("--no-such-option")}, server);
        QCOMPARE(r.exitCode, 2);

        const QString config = path(QStringLiteral("one-iteration.yaml"));
        QVERIFY(writeFile(config, runConfig(1)));
        r = runCli(
            {QStringLiteral("run"), config, QStringLiteral("--store"), path(QStringLiteral("all-failed.sqlite"))},
            server);
        QVERIFY2(r.exitCode == 3, qPrintable(describe(r)));
        QVERIFY2(r.out.contains(QLatin1String("failed (every LLM call failed")), qPrintable(describe(r)));

        // A starting code that does not pass: a copy of the fake data whose start code fails to compile.
        const QString data = path(QStringLiteral("bad-start-data"));
        QVERIFY(QProcess::execute(QStringLiteral("cp"),
                                  {QStringLiteral("-r"), qEnvironmentVariable("AUTOCOMP_FAKE_DATA"), data})
                == 0);
        QVERIFY(writeFile(data + QStringLiteral("/sols/fake/kernel/start.cpp"),
                          "// fake: status=compile_error\nvoid kernel() {}\n"));
        QProcessEnvironment env;
        env.insert(QStringLiteral("AUTOCOMP_DATA_DIR"), data);
        r = runCli({QStringLiteral("run"), config, QStringLiteral("--store"), path(QStringLiteral("bad-start.sqlite"))},
                   server, {}, env);
        QVERIFY2(r.exitCode == 3, qPrintable(describe(r)));
        QVERIFY2(r.out.contains(QLatin1String("starting code")), qPrintable(describe(r)));
    }

    // Missing stores are not created by commands that only read; read-only stores open read-only; a store that
    // cannot be created says "permission denied".
    void storeAccess()
    {
        FakeLlmServer server;
        QVERIFY(startServer(server, deterministicScript()));
        const QString missing = path(QStringLiteral("no/such/dir/s.sqlite"));
        for (const QStringList &command : {QStringList{QStringLiteral("runs"), QStringLiteral("list")},
                                           QStringList{QStringLiteral("resume"), QStringLiteral("1")},
                                           QStringList{QStringLiteral("stop"), QStringLiteral("1")},
                                           QStringList{QStringLiteral("import"), path(QStringLiteral("x.jsonl"))}}) {
            const CliResult r = runCli(command + QStringList{QStringLiteral("--store"), missing}, server);
            QVERIFY2(r.exitCode == 1 && r.err.contains(QLatin1String("does not exist")), qPrintable(describe(r)));
            QVERIFY2(!QFileInfo::exists(path(QStringLiteral("no"))), "no folder is created");
        }

        if (!isRoot())
            QSKIP("a read-only mount needs root (file permissions do not bind root)");

        // File permissions, as a user who may only read the store (root runs the CLI as nobody for this).
        const QString setpriv = QStandardPaths::findExecutable(QStringLiteral("setpriv"));
        if (!setpriv.isEmpty()) {
            QTemporaryDir shared(QDir::tempPath() + QStringLiteral("/autocomp-perm-XXXXXX"));
            QVERIFY(shared.isValid());
            QVERIFY(QFile::setPermissions(shared.path(),
                                          QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner
                                              | QFileDevice::ReadGroup | QFileDevice::ExeGroup | QFileDevice::ReadOther
                                              | QFileDevice::ExeOther));
            const QString readable = shared.filePath(QStringLiteral("runs.sqlite"));
            QVERIFY(QFile::copy(m_referenceStore, readable));
            QVERIFY(QFile::setPermissions(readable,
                                          QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ReadGroup
                                              | QFileDevice::ReadOther));
            const QStringList nobody{setpriv, QStringLiteral("--reuid=65534"), QStringLiteral("--regid=65534"),
                                     QStringLiteral("--clear-groups")};
            CliResult r = runCli({QStringLiteral("runs"), QStringLiteral("list"), QStringLiteral("--store"), readable},
                                 server, {}, {}, nobody);
            QVERIFY2(r.exitCode == 0 && r.err.contains(QLatin1String("opened read-only"))
                         && r.err.contains(QLatin1String("permissions")) && r.out.contains(QLatin1String("finished")),
                     qPrintable(describe(r)));
            r = runCli({QStringLiteral("resume"), QStringLiteral("1"), QStringLiteral("--store"), readable}, server, {},
                       {}, nobody);
            QVERIFY2(r.exitCode == 1 && r.err.contains(QLatin1String("permission denied")), qPrintable(describe(r)));
            const QString config = shared.filePath(QStringLiteral("run.yaml"));
            QVERIFY(QFile::copy(m_config, config));
            QVERIFY(QFile::setPermissions(config,
                                          QFileDevice::ReadOwner | QFileDevice::ReadGroup | QFileDevice::ReadOther));
            r = runCli({QStringLiteral("run"), config, QStringLiteral("--store"),
                        shared.filePath(QStringLiteral("new/runs.sqlite"))},
                       server, {}, {}, nobody);
            QVERIFY2(r.exitCode == 1 && r.err.contains(QLatin1String("permission denied: cannot create the folder")),
                     qPrintable(describe(r)));
        }
        Tmpfs tmpfs;
        const QString mountPoint = path(QStringLiteral("ro"));
        if (!tmpfs.mount(mountPoint, QStringLiteral("16m")))
            QSKIP(qPrintable(QStringLiteral("cannot mount a tmpfs here: ") + tmpfs.error()));
        const QString storePath = mountPoint + QStringLiteral("/runs.sqlite");
        QVERIFY(QFile::copy(m_referenceStore, storePath));
        QVERIFY2(tmpfs.remount(QStringLiteral("ro")), qPrintable(tmpfs.error()));
        const QStringList store{QStringLiteral("--store"), storePath};
        CliResult r = runCli(QStringList{QStringLiteral("runs"), QStringLiteral("list")} + store, server);
        QVERIFY2(r.exitCode == 0 && r.err.contains(QLatin1String("opened read-only"))
                     && r.out.contains(QLatin1String("finished")),
                 qPrintable(describe(r)));
        QCOMPARE(countOf(r.err, QStringLiteral("opened read-only")), 1);
        r = runCli(QStringList{QStringLiteral("runs"), QStringLiteral("show"), QStringLiteral("1")} + store, server);
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        r = runCli(QStringList{QStringLiteral("export"), QStringLiteral("1"), QStringLiteral("--out"),
                               path(QStringLiteral("ro.jsonl"))}
                       + store,
                   server);
        QVERIFY2(r.exitCode == 0 && QFileInfo(path(QStringLiteral("ro.jsonl"))).size() > 0, qPrintable(describe(r)));
        r = runCli(QStringList{QStringLiteral("resume"), QStringLiteral("1")} + store, server);
        QVERIFY2(r.exitCode == 1 && r.err.contains(QLatin1String("permission denied")), qPrintable(describe(r)));
        r = runCli({QStringLiteral("run"), m_config, QStringLiteral("--store"),
                    mountPoint + QStringLiteral("/new/runs.sqlite")},
                   server);
        QVERIFY2(r.exitCode == 1 && r.err.contains(QLatin1String("permission denied")), qPrintable(describe(r)));
        QCOMPARE(countOf(r.err, QStringLiteral("permission denied")), 1);
    }

    // Configuration errors name the file and line, once each.
    void configErrors_data()
    {
        QTest::addColumn<QByteArray>("yaml");
        QTest::addColumn<QString>("message");
        QTest::newRow("negative calls") << runConfig(1, "budget: {max_llm_calls: -1}\n")
                                        << QStringLiteral(":7: 'budget.max_llm_calls' must not be negative");
        QTest::newRow("negative hours") << runConfig(1, "budget:\n  max_hours: -2\n")
                                        << QStringLiteral(":8: 'budget.max_hours' must not be negative");
        QTest::newRow("no target") << QByteArray("problem: kernel\nmodels: {plan: [\"vllm::m1\"]}\n")
                                   << QStringLiteral(":1: missing required key 'target'");
        QTest::newRow("no problem") << QByteArray("target: fake\nmodels: {plan: [\"vllm::m1\"]}\n")
                                    << QStringLiteral(":1: missing required key 'problem'");
    }

    void configErrors()
    {
        QFETCH(QByteArray, yaml);
        QFETCH(QString, message);
        FakeLlmServer server;
        QVERIFY(startServer(server, deterministicScript()));
        const QString config = path(QStringLiteral("bad.yaml"));
        QVERIFY(writeFile(config, yaml));
        const CliResult r = runCli(
            {QStringLiteral("run"), config, QStringLiteral("--store"), path(QStringLiteral("config-errors.sqlite"))},
            server);
        QVERIFY2(r.exitCode == 1, qPrintable(describe(r)));
        QVERIFY2(r.err.contains(config + message), qPrintable(describe(r)));
        QCOMPARE(countOf(r.err, message), 1);
        QCOMPARE(server.requestCount(), 0);
    }

    // Answers are reused within a run (resume); across runs only when the configuration says so.
    void answerReuseIsPerRunUnlessAsked()
    {
        FakeLlmServer server;
        QVERIFY(startServer(server, deterministicScript()));
        const QString storePath = path(QStringLiteral("reuse.sqlite"));
        const QString config = path(QStringLiteral("reuse.yaml"));
        QVERIFY(writeFile(config, runConfig(1)));
        CliResult r = runCli({QStringLiteral("run"), config, QStringLiteral("--store"), storePath}, server);
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        const int first = server.requestCount();
        QVERIFY(first > 0);
        r = runCli({QStringLiteral("run"), config, QStringLiteral("--store"), storePath}, server);
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        QCOMPARE(server.requestCount(), 2 * first);
        QVERIFY(!r.out.contains(QLatin1String("reused across runs")));

        const QString across = path(QStringLiteral("reuse-across.yaml"));
        QVERIFY(writeFile(across, runConfig(1, "llm: {reuse_answers: across_runs}\n")));
        r = runCli({QStringLiteral("run"), across, QStringLiteral("--store"), storePath}, server);
        QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
        QCOMPARE(server.requestCount(), 2 * first);
        QVERIFY2(r.out.contains(QLatin1String("answers reused across runs (llm.reuse_answers: across_runs)")),
                 qPrintable(describe(r)));
    }
};

QTEST_GUILESS_MAIN(TestReliability)
#include "tst_reliability.moc"
