// A new user's first evaluation: the starting code of the first problem of every shipped target that is
// available here, through the real CLI (`autocomp eval --start --sandbox required`), from a cache and
// data directory made empty for this test. Every setup step (rooflines, judges, workers, extensions)
// runs for real inside the sandbox, as on a fresh machine: a file a step needs that the sandbox hides
// fails here, not on a user's machine. Targets that are absent (their tools are not installed) are
// skipped, saying why; a target whose hardware is absent must end in no_hardware, never in an error.
// Also: a target whose setup fails on purpose is reported by `autocomp eval` as the machine's problem; a
// target's tool outside the system's folders, named by a setting, is found in the sandbox with its
// installation, and a missing one is an `error` naming it; a hash placeholder inside an -I argument does
// not hang; SIGTERM stops an evaluation whose setup step hangs.
#include "model/problem.h"
#include "catalog/repository.h"
#include "platform/sandbox.h"

#include "cli_outcome.h"

#include <QDir>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <csignal>

using namespace autocomp;

class TestColdStart : public QObject
{
    Q_OBJECT

    QTemporaryDir m_home;

    using Outcome = test::CliOutcome;

    QProcessEnvironment coldEnvironment(const QMap<QString, QString> &extraEnv = {}) const
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        // Empty at the start of this test: nothing an earlier run built can be reused.
        env.insert(QStringLiteral("XDG_CACHE_HOME"), m_home.filePath(QStringLiteral("cache")));
        env.insert(QStringLiteral("XDG_DATA_HOME"), m_home.filePath(QStringLiteral("data")));
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), m_home.filePath(QStringLiteral("config")));
        for (auto it = extraEnv.cbegin(); it != extraEnv.cend(); ++it)
            env.insert(it.key(), it.value());
        return env;
    }

    Outcome eval(const QStringList &arguments, const QMap<QString, QString> &extraEnv = {}, int timeoutMs = 900000)
    {
        QProcess process;
        process.setProcessEnvironment(coldEnvironment(extraEnv));
        process.start(qEnvironmentVariable("AUTOCOMP_CLI"),
                      QStringList{QStringLiteral("eval")} + arguments + QStringList{QStringLiteral("--json")});
        return test::finishCli(process, timeoutMs);
    }

    // A data directory of test targets: backends/NAME/backend.yaml (the text given) and sols/NAME/p with a
    // start file `start`.
    QString testTarget(const QString &name, const QByteArray &backendYaml, const QByteArray &start)
    {
        const QString root = m_home.filePath(QStringLiteral("targets"));
        const QString backend = root + QStringLiteral("/backends/") + name;
        const QString problem = root + QStringLiteral("/sols/") + name + QStringLiteral("/p");
        if (!QDir().mkpath(backend) || !QDir().mkpath(problem))
            return {};
        auto write = [](const QString &path, const QByteArray &text) {
            QFile f(path);
            return f.open(QIODevice::WriteOnly) && f.write(text) == text.size();
        };
        if (!write(backend + QStringLiteral("/backend.yaml"), backendYaml)
            || !write(problem + QStringLiteral("/problem.yaml"),
                      "name: p\ndescription: \"a test problem\"\nsignature: \"void p()\"\nstart: start.cpp\nreference: "
                      "start.cpp\nshapes: [{N: 1}]\n")
            || !write(problem + QStringLiteral("/start.cpp"), start))
            return {};
        return root;
    }

    static QByteArray describe(const Outcome &o) { return o.describe(); }

    int cachedFiles() const
    {
        int n = 0;
        for (QDirIterator it(m_home.filePath(QStringLiteral("cache")), QDir::Files, QDirIterator::Subdirectories);
             it.hasNext(); it.next())
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
        const Outcome o = eval({QStringLiteral("--target"), target, QStringLiteral("--problem"), problem,
                                QStringLiteral("--start"), QStringLiteral("--sandbox"), QStringLiteral("required")});
        const QString status = o.json.value(QStringLiteral("status")).toString();
        if (noHardware) {
            QVERIFY2(status == QLatin1String("no_hardware"), describe(o).constData());
        } else {
            QVERIFY2(status == QLatin1String("ok") && o.json.value(QStringLiteral("correct")).toBool(),
                     describe(o).constData());
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

    // A tool outside /usr (here under this test's folder, as /opt/chipyard/bin/spike would be), named by a
    // setting through its environment variable: the step finds it, and the sandbox shows its installation
    // (the prefix above bin/, where it reads share/answer.txt). Named but missing: `error` naming it.
    void toolOutsideTheSystemIsFound()
    {
        const QString prefix = m_home.filePath(QStringLiteral("opt"));
        QVERIFY(QDir().mkpath(prefix + QStringLiteral("/bin")) && QDir().mkpath(prefix + QStringLiteral("/share")));
        QFile tool(prefix + QStringLiteral("/bin/mytool"));
        QVERIFY(tool.open(QIODevice::WriteOnly));
        tool.write("#!/bin/sh\nanswer=$(cat \"$(dirname \"$0\")/../share/answer.txt\") || exit 3\n"
                   "printf '{\"status\": \"ok\", \"correct\": true, \"metrics\": {\"latency_ms\": %s}, \"feedback\": "
                   "[], \"flags\": [], "
                   "\"log\": \"\"}\\n' \"$answer\" > \"$2\"\n");
        tool.close();
        QVERIFY(tool.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner));
        QFile answer(prefix + QStringLiteral("/share/answer.txt"));
        QVERIFY(answer.open(QIODevice::WriteOnly) && answer.write("4.25\n") > 0);
        answer.close();
        const QString data = testTarget(
            QStringLiteral("toolpath"),
            "name: toolpath\ndescription: \"a tool outside the system's folders\"\nsettings: {tool: mytool}\n"
            "steps:\n  - {name: judge, role: judge, run: [\"{tool}\", \"{candidate}\", \"{judgedir}/result.json\"], "
            "timeout_s: 30, fail_status: incorrect}\n",
            "void p() {}\n");
        QVERIFY(!data.isEmpty());
        const QStringList args{QStringLiteral("--target"), QStringLiteral("toolpath"), QStringLiteral("--problem"),
                               QStringLiteral("p"),        QStringLiteral("--start"),  QStringLiteral("--sandbox"),
                               QStringLiteral("required")};
        const Outcome found = eval(
            args,
            {{QStringLiteral("AUTOCOMP_DATA_DIR"), data},
             {QStringLiteral("AUTOCOMP_TOOLPATH_TOOL"), prefix + QStringLiteral("/bin/mytool")}});
        QVERIFY2(found.json.value(QStringLiteral("status")).toString() == QLatin1String("ok"),
                 describe(found).constData());
        QCOMPARE(found.json.value(QStringLiteral("metrics")).toObject().value(QStringLiteral("latency_ms")).toDouble(),
                 4.25);

        const QString missing = prefix + QStringLiteral("/bin/notthere");
        const Outcome absent = eval(
            args, {{QStringLiteral("AUTOCOMP_DATA_DIR"), data}, {QStringLiteral("AUTOCOMP_TOOLPATH_TOOL"), missing}});
        QCOMPARE(absent.json.value(QStringLiteral("status")).toString(), QStringLiteral("error"));
        QCOMPARE(absent.exitCode, 1);
        QVERIFY2(absent.json.value(QStringLiteral("log")).toString().contains(missing), describe(absent).constData());
    }

    // A hash placeholder inside an -I argument (as gemmini's "-I{cache_dir}/gemmini-{backend_hash}/include"):
    // expanding it computes the hash, which expands the -I arguments again. This hung every evaluation of
    // such a target (a lock taken twice); now it evaluates.
    void hashInsideAnIncludeFlag()
    {
        const QString data = testTarget(QStringLiteral("hashinclude"),
                                        "name: hashinclude\ndescription: \"a hash inside -I\"\n"
                                        "setup:\n  - {name: header, run: [sh, -c, \"mkdir -p \\\"$0\\\" && echo "
                                        "'#define HI 1' > \\\"$0/hi.h\\\"\", "
                                        "\"{cache_dir}/hi-{backend_hash}/include\"], timeout_s: 30, creates: "
                                        "\"{cache_dir}/hi-{backend_hash}/include/hi.h\"}\n"
                                        "steps:\n  - {name: compile, run: [c++, -fsyntax-only, "
                                        "\"-I{cache_dir}/hi-{backend_hash}/include\", \"{candidate}\"], "
                                        "timeout_s: 60, fail_status: compile_error}\n"
                                        "  - {name: report, role: judge, run: [sh, -c, \"echo '{\\\"status\\\": "
                                        "\\\"ok\\\", \\\"correct\\\": true, \\\"metrics\\\": "
                                        "{\\\"latency_ms\\\": 1}}' > \\\"$0\\\"\", \"{judgedir}/result.json\"], "
                                        "timeout_s: 30, fail_status: error}\n",
                                        "#include \"hi.h\"\nint x = HI;\nvoid p() {}\n");
        QVERIFY(!data.isEmpty());
        const Outcome o = eval({QStringLiteral("--target"), QStringLiteral("hashinclude"), QStringLiteral("--problem"),
                                QStringLiteral("p"), QStringLiteral("--start")},
                               {{QStringLiteral("AUTOCOMP_DATA_DIR"), data}}, 120000);
        QVERIFY2(o.exitCode == 0 && o.json.value(QStringLiteral("status")).toString() == QLatin1String("ok"),
                 describe(o).constData());
    }

    // SIGTERM while a setup step hangs: the evaluation ends within seconds (its step killed), never waits
    // for the step's own time limit.
    void sigtermStopsAHangingEvaluation()
    {
        const QString data = testTarget(QStringLiteral("hang"),
                                        "name: hang\ndescription: \"a setup step that hangs\"\n"
                                        "setup:\n  - {name: forever, run: [sleep, \"987\"], timeout_s: 900}\n"
                                        "steps:\n  - {name: compile, run: [c++, -fsyntax-only, \"{candidate}\"], "
                                        "timeout_s: 60, fail_status: compile_error}\n",
                                        "void p() {}\n");
        QVERIFY(!data.isEmpty());
        QProcess process;
        process.setProcessEnvironment(coldEnvironment({{QStringLiteral("AUTOCOMP_DATA_DIR"), data}}));
        process.start(qEnvironmentVariable("AUTOCOMP_CLI"),
                      {QStringLiteral("eval"), QStringLiteral("--target"), QStringLiteral("hang"),
                       QStringLiteral("--problem"), QStringLiteral("p"), QStringLiteral("--start")});
        QVERIFY(process.waitForStarted());
        QByteArray err;
        QTRY_VERIFY_WITH_TIMEOUT((err += process.readAllStandardError()).contains("running 'forever'"), 60000);
        QElapsedTimer clock;
        clock.start();
        ::kill(pid_t(process.processId()), SIGTERM);
        const bool ended = process.waitForFinished(30000);
        if (!ended)
            process.kill();
        QVERIFY2(ended, "autocomp eval did not end within 30 s of SIGTERM");
        qInfo() << "ended" << clock.elapsed() << "ms after SIGTERM";
        // No sleep of this test is left behind.
        QProcess pgrep;
        pgrep.start(QStringLiteral("pgrep"), {QStringLiteral("-f"), QStringLiteral("^sleep 987$")});
        pgrep.waitForFinished();
        QVERIFY2(pgrep.readAllStandardOutput().trimmed().isEmpty(), "the hanging step's process survived");
    }

    // A target whose setup step fails on purpose (tests/support/fake_data/backends/fake-broken-start:
    // its tool includes a header that is not there): `error`, exit 1, never a verdict about the code,
    // and the message names the step, says it is the machine's, and keeps the compiler's output.
    void failedSetupIsTheMachines()
    {
        const Outcome o = eval({QStringLiteral("--target"), QStringLiteral("fake-broken-start"),
                                QStringLiteral("--problem"), QStringLiteral("kernel"), QStringLiteral("--start")},
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
