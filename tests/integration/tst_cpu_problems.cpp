// Every shipped CPU problem through the real CLI (`autocomp eval`, real compiler, harness and sandbox):
// its naive start code must be correct and timed, and a deliberately wrong variant
// (tests/integration/data/wrong/<problem>_wrong.cpp) must be caught as incorrect by the check step.
// Only correctness and the presence of a timing are asserted, never a speed.
#include "model/problem.h"
#include "catalog/repository.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QtTest>

using namespace autocomp;

class TestCpuProblems : public QObject
{
    Q_OBJECT

private:
    struct Outcome
    {
        bool finished = false;
        int exitCode = -1;
        QByteArray out;
        QByteArray err;
        QJsonObject json;
        QString parseError;
    };

    static void startEval(QProcess &process, const QString &problem, const QString &codeFile,
                          const QStringList &extra = {})
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        process.setProcessEnvironment(env);
        process.start(qEnvironmentVariable("AUTOCOMP_CLI"),
                      QStringList{QStringLiteral("eval"), QStringLiteral("--target"), QStringLiteral("cpu"),
                                  QStringLiteral("--problem"), problem, QStringLiteral("--code"), codeFile,
                                  QStringLiteral("--json")}
                          + extra);
    }

    static QStringList stepNames(const Outcome &o)
    {
        QStringList names;
        for (const QJsonValue step : o.json.value(QStringLiteral("steps")).toArray())
            names << step.toObject().value(QStringLiteral("name")).toString();
        return names;
    }

    static bool feedbackContains(const Outcome &o, const QString &text)
    {
        for (const QJsonValue line : o.json.value(QStringLiteral("feedback")).toArray())
            if (line.toString().contains(text))
                return true;
        return false;
    }

    static Outcome finish(QProcess &process)
    {
        Outcome o;
        o.finished = process.waitForFinished(600000);
        if (!o.finished) {
            process.kill();
            process.waitForFinished();
        }
        o.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
        o.out = process.readAllStandardOutput();
        o.err = process.readAllStandardError();
        QJsonParseError error;
        o.json = QJsonDocument::fromJson(o.out, &error).object();
        if (error.error != QJsonParseError::NoError)
            o.parseError = error.errorString();
        return o;
    }

    static QByteArray describe(const Outcome &o)
    {
        return "exit " + QByteArray::number(o.exitCode) + "\nstdout:\n" + o.out.left(4000) + "\nstderr:\n"
            + o.err.right(2000);
    }

    static QString wrongFile(const QString &problem)
    {
        return qEnvironmentVariable("AUTOCOMP_TEST_DATA") + QStringLiteral("/integration/data/wrong/") + problem
            + QStringLiteral("_wrong.cpp");
    }

private Q_SLOTS:
    void initTestCase()
    {
        const QString cli = qEnvironmentVariable("AUTOCOMP_CLI");
        QVERIFY2(!cli.isEmpty() && QFileInfo(cli).isExecutable(), "AUTOCOMP_CLI must name the built autocomp binary");
        QVERIFY2(!qEnvironmentVariable("AUTOCOMP_DATA_DIR").isEmpty(),
                 "AUTOCOMP_DATA_DIR must point at the source tree");
    }

    // The shipped problem list matches this table, so a new problem gets a start and a wrong variant here.
    void everyShippedProblemIsCovered()
    {
        Repository repository(QStringList{qEnvironmentVariable("AUTOCOMP_DATA_DIR")});
        QStringList shipped = repository.problemNames(QStringLiteral("cpu"));
        shipped.sort();
        QStringList covered = problems();
        covered.sort();
        QCOMPARE(shipped.join(QLatin1Char(',')), covered.join(QLatin1Char(',')));
    }

    void startPassesAndWrongVariantFails_data()
    {
        QTest::addColumn<QString>("problem");
        for (const QString &p : problems())
            QTest::newRow(qPrintable(p)) << p;
    }

    void startPassesAndWrongVariantFails()
    {
        QFETCH(QString, problem);
        Repository repository(QStringList{qEnvironmentVariable("AUTOCOMP_DATA_DIR")});
        QString error;
        const auto loaded = repository.problem(QStringLiteral("cpu"), problem, &error);
        QVERIFY2(loaded, qPrintable(error));
        // The layout every CPU problem follows (DESIGN.md §5).
        QCOMPARE(loaded->name, problem);
        QVERIFY(!loaded->signature.isEmpty());
        QVERIFY(!loaded->context.isEmpty());
        QVERIFY(QFileInfo::exists(loaded->referenceFile));
        QVERIFY2(loaded->shapes.size() >= 3, "several shapes, including odd ones");
        QVERIFY(!loaded->flops.isEmpty());
        QVERIFY(!loaded->bytes.isEmpty());
        QCOMPARE(loaded->allowLibraries, false);
        QVERIFY(QFileInfo::exists(wrongFile(problem)));

        // One after the other: the first evaluation builds the problem's cached harness object, which
        // the second then reuses.
        QElapsedTimer timer;
        timer.start();
        QProcess startProcess;
        startEval(startProcess, problem, loaded->startFile);
        QVERIFY(startProcess.waitForStarted(10000));
        const Outcome start = finish(startProcess);
        const double startSeconds = timer.restart() / 1000.0;
        QProcess wrongProcess;
        startEval(wrongProcess, problem, wrongFile(problem));
        QVERIFY(wrongProcess.waitForStarted(10000));
        const Outcome wrong = finish(wrongProcess);
        qInfo("%s: start evaluated in %.1f s, wrong variant in %.1f s", qPrintable(problem), startSeconds,
              timer.elapsed() / 1000.0);

        // The start code: correct and timed.
        QVERIFY2(start.finished, describe(start).constData());
        QVERIFY2(start.parseError.isEmpty(), describe(start).constData());
        QVERIFY2(start.exitCode == 0, describe(start).constData());
        QCOMPARE(start.json.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
        QCOMPARE(start.json.value(QStringLiteral("correct")).toBool(), true);
        const QJsonObject metrics = start.json.value(QStringLiteral("metrics")).toObject();
        const double median =
            metrics.value(QStringLiteral("latency_ms")).toObject().value(QStringLiteral("median")).toDouble(-1);
        QVERIFY2(median > 0, describe(start).constData());
        QVERIFY2(metrics.value(QStringLiteral("latency_ms")).toObject().value(QStringLiteral("n")).toInt() >= 1,
                 describe(start).constData());
        // Every problem moves data, so a bandwidth figure exists even where flops is 0 (transpose).
        QVERIFY2(metrics.value(QStringLiteral("gbps")).toDouble(-1) > 0, describe(start).constData());
        if (loaded->flops.trimmed() == QLatin1String("0"))
            QCOMPARE(metrics.value(QStringLiteral("gflops")).toDouble(-1), 0.0);
        else
            QVERIFY2(metrics.value(QStringLiteral("gflops")).toDouble(-1) > 0, describe(start).constData());

        // The cache-interference probe ran between repetitions: its median over its quiet time, which is
        // at most the fastest probe of this run, so at least 1 (autocomp_probe.h).
        const double interference = metrics.value(QStringLiteral("cache_interference")).toDouble(-1);
        QVERIFY2(interference >= 1.0 && interference < 10.0, describe(start).constData());
        bool probeFeedback = false;
        for (const QJsonValue line : start.json.value(QStringLiteral("feedback")).toArray())
            probeFeedback = probeFeedback || line.toString().contains(QLatin1String("cache interference"))
                || line.toString().contains(QLatin1String("shared this core's caches"));
        QVERIFY2(probeFeedback, describe(start).constData());

        // The wrong variant: evaluated, and rejected by the correctness check.
        QVERIFY2(wrong.finished, describe(wrong).constData());
        QVERIFY2(wrong.parseError.isEmpty(), describe(wrong).constData());
        QVERIFY2(wrong.exitCode == 3, describe(wrong).constData());
        QCOMPARE(wrong.json.value(QStringLiteral("status")).toString(), QStringLiteral("incorrect"));
        QCOMPARE(wrong.json.value(QStringLiteral("correct")).toBool(), false);
    }

    // evaluation.profile (autocomp eval --profile): one call under callgrind's cache simulation adds
    // miss rates and an instruction count; a candidate whose x86-64-v3 copy cannot be built gets a
    // note instead, and the evaluation goes on. Without the option the profile steps do not run.
    void cacheProfile()
    {
        if (QStandardPaths::findExecutable(QStringLiteral("valgrind")).isEmpty())
            QSKIP("valgrind is not installed (packaging/install-deps.sh installs it)");
        Repository repository(QStringList{qEnvironmentVariable("AUTOCOMP_DATA_DIR")});
        QString error;
        const auto gemm = repository.problem(QStringLiteral("cpu"), QStringLiteral("gemm"), &error);
        QVERIFY2(gemm, qPrintable(error));

        QProcess process;
        startEval(process, QStringLiteral("gemm"), gemm->startFile, {QStringLiteral("--profile")});
        const Outcome profiled = finish(process);
        QVERIFY2(profiled.exitCode == 0, describe(profiled).constData());
        QVERIFY2(stepNames(profiled).contains(QStringLiteral("profile")), describe(profiled).constData());
        const QJsonObject metrics = profiled.json.value(QStringLiteral("metrics")).toObject();
        QVERIFY2(metrics.value(QStringLiteral("instructions")).toDouble(-1) > 0, describe(profiled).constData());
        const double d1 = metrics.value(QStringLiteral("d1_miss_rate")).toDouble(-1);
        QVERIFY2(d1 >= 0 && d1 <= 1, describe(profiled).constData());
        QVERIFY2(feedbackContains(profiled, QStringLiteral("counted from the entry point, callees included")),
                 describe(profiled).constData());

        // The gemm start code evaluated by startPassesAndWrongVariantFails has no profile steps; here
        // the same without --profile, checked directly.
        QProcess plainProcess;
        startEval(plainProcess, QStringLiteral("gemm"), gemm->startFile);
        const Outcome plain = finish(plainProcess);
        QVERIFY2(plain.exitCode == 0, describe(plain).constData());
        QVERIFY2(!stepNames(plain).contains(QStringLiteral("profile"))
                     && !stepNames(plain).contains(QStringLiteral("compile_profile")),
                 describe(plain).constData());
        QVERIFY2(!plain.json.value(QStringLiteral("metrics")).toObject().contains(QStringLiteral("instructions")),
                 describe(plain).constData());

        if (!__builtin_cpu_supports("avx512f"))
            QSKIP("this CPU has no AVX-512, so the AVX-512-only candidate cannot be built natively either");
        QProcess avxProcess;
        startEval(avxProcess, QStringLiteral("gemm"),
                  qEnvironmentVariable("AUTOCOMP_TEST_DATA") + QStringLiteral("/integration/data/gemm_avx512_only.cpp"),
                  {QStringLiteral("--profile")});
        const Outcome avx = finish(avxProcess);
        QVERIFY2(avx.exitCode == 0, describe(avx).constData());
        QCOMPARE(avx.json.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
        QVERIFY2(feedbackContains(avx, QStringLiteral("step 'compile_profile' (optional) exited with status 1")),
                 describe(avx).constData());
        QVERIFY2(!avx.json.value(QStringLiteral("metrics")).toObject().contains(QStringLiteral("instructions")),
                 describe(avx).constData());
    }

    // Paired timing: a blocked gemm timed alternately with the start code (the default baseline of
    // `autocomp eval`) in the same window. The ratio comes with its interval, the baseline's own time
    // is reported, and a faster kernel has a ratio below 1.
    void pairedRatioAgainstTheStartCode()
    {
        QProcess process;
        startEval(process, QStringLiteral("gemm"),
                  qEnvironmentVariable("AUTOCOMP_TEST_DATA") + QStringLiteral("/integration/data/gemm_blocked.cpp"));
        const Outcome fast = finish(process);
        QVERIFY2(fast.exitCode == 0, describe(fast).constData());
        QVERIFY2(stepNames(fast).contains(QStringLiteral("compile_baseline")), describe(fast).constData());
        const QJsonObject metrics = fast.json.value(QStringLiteral("metrics")).toObject();
        const QJsonObject ratio = metrics.value(QStringLiteral("paired_ratio")).toObject();
        const double value = ratio.value(QStringLiteral("value")).toDouble(-1);
        QVERIFY2(value > 0 && value < 1, describe(fast).constData());
        QVERIFY2(ratio.value(QStringLiteral("ci_low")).toDouble(-1) <= value
                     && value <= ratio.value(QStringLiteral("ci_high")).toDouble(-1),
                 describe(fast).constData());
        QVERIFY2(ratio.value(QStringLiteral("pairs")).toInt() >= 6, describe(fast).constData());
        QVERIFY2(
            metrics.value(QStringLiteral("baseline_latency_ms")).toDouble(-1)
                > metrics.value(QStringLiteral("latency_ms")).toObject().value(QStringLiteral("median")).toDouble(),
            describe(fast).constData());
        QVERIFY2(feedbackContains(fast, QStringLiteral("against the baseline timed alternately")),
                 describe(fast).constData());
        // Without a baseline: no ratio, no baseline build.
        QProcess alone;
        startEval(alone, QStringLiteral("gemm"),
                  qEnvironmentVariable("AUTOCOMP_TEST_DATA") + QStringLiteral("/integration/data/gemm_blocked.cpp"),
                  {QStringLiteral("--no-baseline")});
        const Outcome single = finish(alone);
        QVERIFY2(single.exitCode == 0, describe(single).constData());
        QVERIFY2(!single.json.value(QStringLiteral("metrics")).toObject().contains(QStringLiteral("paired_ratio")),
                 describe(single).constData());
        QVERIFY2(!stepNames(single).contains(QStringLiteral("compile_baseline")), describe(single).constData());
    }

private:
    static QStringList problems()
    {
        return {QStringLiteral("gemm"),      QStringLiteral("conv2d"),          QStringLiteral("depthwise_conv1d"),
                QStringLiteral("softmax"),   QStringLiteral("layernorm"),       QStringLiteral("rmsnorm"),
                QStringLiteral("transpose"), QStringLiteral("causal_attention")};
    }
};

QTEST_GUILESS_MAIN(TestCpuProblems)
#include "tst_cpu_problems.moc"
