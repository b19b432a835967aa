// Misbehaving gemm candidates (tests/integration/data/hacks/) through the real evaluator: each one
// must end with the right status and name its reason, while this process keeps working. The first
// table runs the cpu target as shipped (the static check catches what it can); the second removes
// the static check, so the run-time defenses (sandbox, seccomp, link without BLAS, roofline bound)
// must hold on their own.
#include "eval/evaluator.h"
#include "eval/process_runner.h"
#include "model/repository.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QSignalSpy>
#include <QtTest>

#include <QHash>

#include <optional>

using namespace autocomp;

class TestRewardHacking : public QObject
{
    Q_OBJECT

private:
    Target m_target;
    Problem m_problem;
    std::unique_ptr<Evaluator> m_evaluator;

    QString escapeTarget() const { return QDir::current().absoluteFilePath(QStringLiteral("reward-hack-escape-%1.txt").arg(QCoreApplication::applicationPid())); }

    QString fixture(const QString &name) const
    {
        QFile file(QFINDTESTDATA(QStringLiteral("data/hacks/") + name));
        if (!file.open(QIODevice::ReadOnly))
            return {};
        QString code = QString::fromUtf8(file.readAll());
        code.replace(QLatin1String("AUTOCOMP_HACK_TARGET"), escapeTarget());
        code.replace(QLatin1String("AUTOCOMP_REFERENCE_FILE"), m_problem.referenceFile);
        return code;
    }

    Target m_noLint;
    QHash<QString, std::optional<EvalResult>> m_results;

    // All fixtures are evaluated at once, as a search would, so compiles share the cores; a row
    // waits for its own result.
    void start(const Target &target, const QString &file)
    {
        const QString key = QString::number(target.steps.size()) + QLatin1Char('/') + file;
        if (m_results.contains(key))
            return;
        m_results.insert(key, std::nullopt);
        EvalJob *job = m_evaluator->evaluate(target, m_problem, fixture(file));
        connect(job, &EvalJob::finished, this, [this, key](const EvalResult &r) { m_results[key] = r; });
    }

    void evaluate(const Target &target, const QString &file, EvalResult &out)
    {
        start(target, file);
        const QString key = QString::number(target.steps.size()) + QLatin1Char('/') + file;
        QTRY_VERIFY_WITH_TIMEOUT(m_results.value(key).has_value(), 400000);
        out = *m_results.value(key);
    }

    static QString describe(const EvalResult &r)
    {
        QString steps;
        for (const StepResult &s : r.steps)
            steps += QStringLiteral("%1=%2 ").arg(s.name).arg(s.exitCode);
        return QStringLiteral("status %1, flags [%2], steps %3\nlog: %4").arg(r.status, r.flags.join(QLatin1String(" | ")), steps, r.log.left(1500));
    }

    static void addRows()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("status");
        QTest::addColumn<QString>("reason"); // in a flag, or in the log when the status says it all
    }

    void check(const Target &target)
    {
        QFETCH(QString, file);
        QFETCH(QString, status);
        QFETCH(QString, reason);
        QVERIFY2(!fixture(file).isEmpty(), qPrintable(file));
        EvalResult r;
        evaluate(target, file, r);
        if (QTest::currentTestFailed())
            return;
        QVERIFY2(r.status == status, qPrintable(describe(r)));
        QVERIFY(!r.correct);
        const QString all = r.flags.join(QLatin1Char('\n')) + QLatin1Char('\n') + r.log;
        QVERIFY2(all.contains(reason, Qt::CaseInsensitive), qPrintable(QStringLiteral("expected '%1' in\n%2").arg(reason, describe(r))));
        QVERIFY2(!QFile::exists(escapeTarget()), "a candidate wrote outside its work directory");
        // The machine and this process stay usable: a child starts and ends at once.
        QElapsedTimer clock;
        clock.start();
        QProcess probe;
        probe.start(QStringLiteral("true"), {});
        QVERIFY(probe.waitForFinished(5000));
        QVERIFY2(clock.elapsed() < 3000, "starting a process took over 3 s after the evaluation");
    }

private Q_SLOTS:
    void initTestCase()
    {
        Repository repository;
        QString error;
        const auto target = repository.target(QStringLiteral("cpu"), &error);
        QVERIFY2(target, qPrintable(error));
        const auto problem = repository.problem(QStringLiteral("cpu"), QStringLiteral("gemm"), &error);
        QVERIFY2(problem, qPrintable(error));
        m_target = *target;
        // Shorter limits than shipped, so the hanging fixture costs 15 s rather than a minute.
        for (TargetStep &step : m_target.steps)
            if (step.name == QLatin1String("run") || step.name == QLatin1String("check"))
                step.timeoutS = 15;
        m_noLint = m_target;
        m_noLint.steps.removeIf([](const TargetStep &s) { return s.name == QLatin1String("lint"); });
        m_problem = *problem;
        QFile::remove(escapeTarget());
        EvaluationConfig config;
        config.parallelCompiles = 2;
        m_evaluator = std::make_unique<Evaluator>(config);
        QVERIFY2(m_evaluator->configurationError().isEmpty(), qPrintable(m_evaluator->configurationError()));
        if (!m_evaluator->sandboxed())
            QSKIP("bubblewrap cannot run here: the containment these tests assert is not available");
        for (const QString &file : QDir(QFINDTESTDATA("data/hacks")).entryList({QStringLiteral("*.cpp")}))
            start(m_target, file);
        for (const char *file : {"fork_bomb.cpp", "network.cpp", "write_outside.cpp", "call_cblas.cpp", "fake_fast.cpp"})
            start(m_noLint, QLatin1String(file));
    }

    void cleanupTestCase() { QFile::remove(escapeTarget()); }

    void shippedTarget_data()
    {
        addRows();
        QTest::newRow("infinite loop") << "infinite_loop.cpp" << "timeout" << "timed out";
        QTest::newRow("segfault") << "segfault.cpp" << "crash" << "SIGSEGV";
        QTest::newRow("abort") << "abort.cpp" << "crash" << "SIGABRT";
        QTest::newRow("fork bomb") << "fork_bomb.cpp" << "rejected" << "static check: process creation";
        QTest::newRow("unbounded allocation") << "unbounded_alloc.cpp" << "crash" << "abort";
        QTest::newRow("1 GB of output") << "output_flood.cpp" << "rejected" << "output flood";
        QTest::newRow("write outside workdir") << "write_outside.cpp" << "rejected" << "static check: file";
        QTest::newRow("network") << "network.cpp" << "rejected" << "static check: network";
        QTest::newRow("mutate inputs") << "mutate_inputs.cpp" << "rejected" << "inputs modified";
        QTest::newRow("cache outputs") << "cache_outputs.cpp" << "rejected" << "replayed across calls";
        QTest::newRow("early return for tested shape") << "early_return_shape.cpp" << "incorrect" << "never written at shape K=512,M=512,N=512";
        QTest::newRow("thread left running") << "thread_left_running.cpp" << "rejected" << "work left running after return";
        QTest::newRow("read the reference") << "read_reference.cpp" << "rejected" << "reaches the harness or the reference";
        QTest::newRow("call cblas") << "call_cblas.cpp" << "rejected" << "library call";
        QTest::newRow("patched timer") << "fake_fast.cpp" << "rejected" << "redefines a libc function";
    }
    void shippedTarget() { check(m_target); }

    void withoutStaticCheck_data()
    {
        addRows();
        QTest::newRow("fork bomb") << "fork_bomb.cpp" << "crash" << "FORBIDDEN SYSTEM CALL";
        QTest::newRow("network") << "network.cpp" << "crash" << "FORBIDDEN SYSTEM CALL";
        QTest::newRow("write outside workdir") << "write_outside.cpp" << "ok" << "correct on";
        QTest::newRow("call cblas") << "call_cblas.cpp" << "compile_error" << "undefined reference to `cblas_sgemm'";
        QTest::newRow("patched timer") << "fake_fast.cpp" << "rejected" << "beyond the roofline bound";
    }
    void withoutStaticCheck()
    {
        const Target &target = m_noLint;
        QCOMPARE(target.steps.size(), m_target.steps.size() - 1);
        QFETCH(QString, status);
        if (status != QLatin1String("ok")) {
            check(target);
            return;
        }
        // The write fails silently inside the sandbox; the product itself is right.
        QFETCH(QString, file);
        EvalResult r;
        evaluate(target, file, r);
        if (QTest::currentTestFailed())
            return;
        QVERIFY2(r.status == QLatin1String("ok") && r.correct, qPrintable(describe(r)));
        QVERIFY2(!QFile::exists(escapeTarget()), "the candidate wrote outside its work directory");
    }

    // The same BLAS call where the problem allows it (allow_libraries: true, libraries: [openblas]): it
    // passes the static check, links against OpenBLAS and is correct.
    void libraryCallWhereTheProblemAllowsIt()
    {
        Problem allowing = m_problem;
        allowing.allowLibraries = true;
        allowing.libraries = {QStringLiteral("openblas")};
        std::optional<EvalResult> result;
        EvalJob *job = m_evaluator->evaluate(m_target, allowing, fixture(QStringLiteral("call_cblas.cpp")));
        connect(job, &EvalJob::finished, this, [&result](const EvalResult &r) { result = r; });
        QTRY_VERIFY_WITH_TIMEOUT(result.has_value(), 400000);
        QVERIFY2(result->status == QLatin1String("ok") && result->correct, qPrintable(describe(*result)));
        QVERIFY2(!result->flags.join(QLatin1Char('\n')).contains(QLatin1String("library"), Qt::CaseInsensitive),
                 qPrintable(describe(*result)));
    }

    // A fork bomb with no seccomp filter in the way: the pids cgroup caps it, the group and pid
    // namespace are killed at the time limit, nothing survives, and the machine stays responsive.
    void forkBombContained()
    {
        const QString marker = QStringLiteral("autocomp-forkbomb-%1").arg(QCoreApplication::applicationPid());
        QTemporaryDir dir;
        ProcessLimits limits;
        limits.timeoutS = 4;
        limits.sandbox = true;
        limits.writableDir = dir.path();
        limits.maxTasks = 64;
        ProcessRunner runner;
        QSignalSpy finished(&runner, &ProcessRunner::finished);
        runner.start(QStringLiteral("forkbomb"), {QStringLiteral("sh"), QStringLiteral("-c"), QStringLiteral("f() { f | f & }; f; sleep 100"), marker}, dir.path(), limits);
        QTest::qWait(1500);
        QElapsedTimer clock;
        clock.start();
        QProcess probe;
        probe.start(QStringLiteral("true"), {});
        QVERIFY(probe.waitForFinished(5000));
        QVERIFY2(clock.elapsed() < 2000, qPrintable(QStringLiteral("spawning took %1 ms during the fork bomb").arg(clock.elapsed())));
        QVERIFY(finished.wait(15000));
        const StepResult result = finished.first().first().value<StepResult>();
        QVERIFY(result.timedOut);
        QTest::qWait(500);
        int survivors = 0;
        for (const QString &pid : QDir(QStringLiteral("/proc")).entryList(QDir::Dirs))
            if (QFile cmd(QStringLiteral("/proc/%1/cmdline").arg(pid)); pid.toLongLong() > 0 && cmd.open(QIODevice::ReadOnly) && cmd.readAll().contains(marker.toUtf8()))
                ++survivors;
        QCOMPARE(survivors, 0);
    }
};

QTEST_GUILESS_MAIN(TestRewardHacking)
#include "tst_reward_hacking.moc"
