// The kernelbench target on device cpu, for real: Debian's torch runs the KernelBench-format
// references and g++ builds the candidates' load_inline extensions. Skips, with the reason, where
// python3 cannot import torch (packaging/install-deps.sh --kernelbench installs it).
//
//   - `autocomp problems import` on a folder laid out as a KernelBench checkout: ids named after the
//     files and levels, problem folders that refer to the files, a scale picked for files at GPU sizes,
//     a file that is not a problem skipped, a broken one named with its error;
//   - `autocomp eval --start` on an imported problem: the reference is correct;
//   - hand-written candidates: a fused load_inline kernel is correct, a wrong one is incorrect, a
//     fallback to torch ops (the gate's allow-list) and a try/except fallback are rejected, Python and C++
//     errors are compile errors with the message; the same file's build is reused from the cache;
//   - device cuda without CUDA torch: the target is listed absent with the reason, never simulated;
//   - a whole `autocomp run` against the local LLM server finishes with the fused candidate as best.
#include "cli_outcome.h"
#include "fake_llm_server.h"
#include "catalog/repository.h"
#include "store/run_store.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <memory>

using namespace autocomp;

class TestKernelBench : public QObject
{
    Q_OBJECT

private:
    using Outcome = autocomp::test::CliOutcome;

    static QString data(const QString &name)
    {
        return qEnvironmentVariable("AUTOCOMP_TEST_DATA") + QStringLiteral("/integration/data/") + name;
    }

    QProcessEnvironment environment() const
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        // Imported problems go to this user data dir; builds are kept in this cache, shared by the tests.
        env.insert(QStringLiteral("XDG_DATA_HOME"), m_dir.filePath(QStringLiteral("data")));
        env.insert(QStringLiteral("XDG_CACHE_HOME"), m_dir.filePath(QStringLiteral("cache")));
        env.insert(QStringLiteral("AUTOCOMP_KERNELBENCH_TRIALS"), QStringLiteral("20"));
        return env;
    }

    std::unique_ptr<QProcess> start(const QStringList &arguments, const QProcessEnvironment &env) const
    {
        auto process = std::make_unique<QProcess>();
        process->setProcessEnvironment(env);
        process->start(qEnvironmentVariable("AUTOCOMP_CLI"), arguments);
        return process;
    }

    static Outcome finish(QProcess &process, int timeoutMs = 900000)
    {
        return autocomp::test::finishCli(process, timeoutMs);
    }

    Outcome cli(const QStringList &arguments, QProcessEnvironment env = {}) const
    {
        auto process = start(arguments, env.isEmpty() ? environment() : env);
        return finish(*process);
    }

    std::unique_ptr<QProcess> startEval(const QString &problem, const QString &code) const
    {
        return start({QStringLiteral("eval"), QStringLiteral("--target"), QStringLiteral("kernelbench"),
                      QStringLiteral("--problem"), problem, QStringLiteral("--code"), code, QStringLiteral("--json")},
                     environment());
    }

    // Two evaluations at a time (the machines that run the tests have two cores).
    QList<Outcome> evaluate(const QString &problem, const QStringList &files) const
    {
        return autocomp::test::runTwoAtATime(files.size(),
                                             [&](qsizetype i) { return startEval(problem, files.at(i)); });
    }

    static QByteArray describe(const Outcome &o) { return o.describe(); }

    static QString status(const Outcome &o) { return o.json.value(QStringLiteral("status")).toString(); }
    static double metric(const Outcome &o, const char *name, const char *field = nullptr)
    {
        const QJsonValue v = o.json.value(QStringLiteral("metrics")).toObject().value(QLatin1String(name));
        return field ? v.toObject().value(QLatin1String(field)).toDouble(-1) : v.toDouble(-1);
    }
    static QStringList stepNames(const Outcome &o)
    {
        QStringList names;
        for (const QJsonValue &s : o.json.value(QStringLiteral("steps")).toArray())
            names << s.toObject().value(QStringLiteral("name")).toString();
        return names;
    }

    bool copy(const QString &from, const QString &to)
    {
        QDir().mkpath(QFileInfo(to).absolutePath());
        return QFile::copy(from, to);
    }

    QTemporaryDir m_dir;
    QString m_absent;
    QString m_shipped; // the shipped data dir

private Q_SLOTS:
    void initTestCase()
    {
        const QString cli = qEnvironmentVariable("AUTOCOMP_CLI");
        QVERIFY2(!cli.isEmpty() && QFileInfo(cli).isExecutable(), "AUTOCOMP_CLI must name the built autocomp binary");
        QVERIFY(m_dir.isValid());
        m_shipped = qEnvironmentVariable("AUTOCOMP_DATA_DIR");
        Repository repository(QStringList{m_shipped});
        QString error;
        const auto target = repository.target(QStringLiteral("kernelbench"), &error);
        QVERIFY2(target, qPrintable(error));
        QCOMPARE(target->language, QStringLiteral("python"));
        QCOMPARE(target->fileExtension, QStringLiteral("py"));
        if (!target->available())
            m_absent = target->absenceReason()
                + QStringLiteral(" (packaging/install-deps.sh --kernelbench installs python3-torch)");
        // Every shipped problem loads, in KernelBench's format, with its start code.
        const QStringList names = repository.problemNames(QStringLiteral("kernelbench"));
        QVERIFY2(names.contains(QStringLiteral("level1/1_NewGELU"))
                     && names.contains(QStringLiteral("level2/1_ScaleShiftClampSquare")),
                 qPrintable(names.join(QLatin1Char(','))));
        for (const QString &name : names) {
            const auto problem = repository.problem(QStringLiteral("kernelbench"), name, &error);
            QVERIFY2(problem, qPrintable(error));
            QCOMPARE(problem->name, name);
            QCOMPARE(problem->format, QStringLiteral("kernelbench"));
            QVERIFY(problem->startCode().contains(QStringLiteral("class ModelNew(Model)")));
            QVERIFY(problem->scale > 0 && problem->scale <= 1);
        }
    }

    // KernelBench files at GPU sizes are the normal case: the importer picks a scale for this CPU.
    void importsAKernelBenchCheckout()
    {
        if (!m_absent.isEmpty())
            QSKIP(qPrintable(m_absent));
        const QString root = m_dir.filePath(QStringLiteral("KernelBench/KernelBench"));
        QVERIFY(copy(m_shipped + QStringLiteral("/sols/kernelbench/level1/1_NewGELU/model.py"),
                     root + QStringLiteral("/level1/88_MinGPTNewGelu.py")));
        QVERIFY(copy(m_shipped + QStringLiteral("/sols/kernelbench/level2/1_ScaleShiftClampSquare/model.py"),
                     root + QStringLiteral("/level2/7_Scale_Shift_Clamp_Square.py")));
        // Not a problem file (no Model/get_inputs): not imported, not an error.
        QFile helper(root + QStringLiteral("/level2/utils.py"));
        QVERIFY(helper.open(QIODevice::WriteOnly) && helper.write("def helper():\n    return 1\n") > 0);
        helper.close();

        const Outcome o = cli(
            {QStringLiteral("problems"), QStringLiteral("import"), m_dir.filePath(QStringLiteral("KernelBench"))});
        QVERIFY2(o.exitCode == 0, describe(o).constData());
        QCOMPARE(QString::fromUtf8(o.out).split(QLatin1Char('\n'), Qt::SkipEmptyParts),
                 (QStringList{QStringLiteral("level1/88_MinGPTNewGelu"),
                              QStringLiteral("level2/7_Scale_Shift_Clamp_Square")}));

        // The folder refers to the user's file and records the level and the scale it picked.
        Repository repository(QStringList{m_dir.filePath(QStringLiteral("data/autocomp-workbench")), m_shipped});
        QString error;
        const auto gelu = repository.problem(QStringLiteral("kernelbench"), QStringLiteral("level1/88_MinGPTNewGelu"),
                                             &error);
        QVERIFY2(gelu, qPrintable(error));
        QCOMPARE(gelu->referenceFile, root + QStringLiteral("/level1/88_MinGPTNewGelu.py"));
        QCOMPARE(gelu->level, 1);
        // 4096 x 16384 floats (256 MiB) take far longer than 50 ms on one core: scaled down.
        QVERIFY2(gelu->scale < 1.0, qPrintable(QString::number(gelu->scale)));
        QVERIFY(gelu->startCode().startsWith(QStringLiteral("import math")));

        const Outcome listed = cli({QStringLiteral("problems"), QStringLiteral("kernelbench")});
        QVERIFY(listed.out.contains("kernelbench/level1/88_MinGPTNewGelu\n")
                && listed.out.contains("kernelbench/level2/7_Scale_Shift_Clamp_Square\n"));

        // A file that looks like a problem but whose reference fails: named, with the error; exit 1.
        QFile broken(m_dir.filePath(QStringLiteral("broken/level1/9_Broken.py")));
        QDir().mkpath(QFileInfo(broken).absolutePath());
        QVERIFY(broken.open(QIODevice::WriteOnly));
        broken.write("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x @ x\n"
                     "def get_inputs():\n    return [torch.randn(3, 5)]\ndef get_init_inputs():\n    return []\n");
        broken.close();
        const Outcome bad = cli({QStringLiteral("problems"), QStringLiteral("import"), broken.fileName()});
        QCOMPARE(bad.exitCode, 1);
        QVERIFY2(bad.err.contains("9_Broken.py") && bad.err.contains("RuntimeError"), describe(bad).constData());
        QVERIFY(bad.out.isEmpty());

        // The start code of an imported problem: the reference itself, correct, timed against eager.
        const Outcome start = cli({QStringLiteral("eval"), QStringLiteral("--target"), QStringLiteral("kernelbench"),
                                   QStringLiteral("--problem"), QStringLiteral("level2/7_Scale_Shift_Clamp_Square"),
                                   QStringLiteral("--start"), QStringLiteral("--json")});
        QVERIFY2(start.exitCode == 0, describe(start).constData());
        QCOMPARE(status(start), QStringLiteral("ok"));
        QVERIFY(metric(start, "latency_ms", "median") > 0 && metric(start, "reference_ms", "median") > 0);
        QCOMPARE(metric(start, "latency_ms", "n"), 20.0);
    }

    void handWrittenCandidates()
    {
        if (!m_absent.isEmpty())
            QSKIP(qPrintable(m_absent));
        const QString problem = QStringLiteral("level2/1_ScaleShiftClampSquare");
        const QString dir = QStringLiteral("kernelbench/");
        const QList<Outcome> o = evaluate(problem,
                                          {data(dir + QStringLiteral("scale_shift_clamp_square_fused.py")),
                                           data(dir + QStringLiteral("scale_shift_clamp_square_wrong.py")),
                                           data(dir + QStringLiteral("scale_shift_clamp_square_fallback.py")),
                                           data(dir + QStringLiteral("scale_shift_clamp_square_try.py")),
                                           data(dir + QStringLiteral("syntax_error.py")),
                                           data(dir + QStringLiteral("cpp_error.py"))});
        const Outcome &fused = o.at(0), &wrong = o.at(1), &fallback = o.at(2), &tryExcept = o.at(3), &syntax = o.at(4),
                      &cppError = o.at(5);

        QVERIFY2(fused.exitCode == 0 && status(fused) == QLatin1String("ok"), describe(fused).constData());
        QVERIFY(metric(fused, "latency_ms", "median") > 0);
        QVERIFY(metric(fused, "speedup_vs_eager") > 0);
        // The speedup is a measurement, printed here and in the kernelbench_eval benchmark, not asserted.
        qInfo("fused candidate: %.3f ms median, %.2fx over eager", metric(fused, "latency_ms", "median"),
              metric(fused, "speedup_vs_eager"));

        QVERIFY2(wrong.exitCode == 3 && status(wrong) == QLatin1String("incorrect"), describe(wrong).constData());
        QVERIFY(wrong.json.value(QStringLiteral("log")).toString().contains(QStringLiteral("elements differ")));

        QVERIFY2(status(fallback) == QLatin1String("rejected"), describe(fallback).constData());
        QVERIFY2(fallback.json.value(QStringLiteral("log"))
                     .toString()
                     .contains(QStringLiteral("torch.clamp is not on this target's allow-list")),
                 describe(fallback).constData());
        QVERIFY2(stepNames(fallback).contains(QStringLiteral("gate")),
                 describe(fallback).constData()); // the gate, after the build

        QVERIFY2(status(tryExcept) == QLatin1String("rejected"), describe(tryExcept).constData());
        QVERIFY(tryExcept.json.value(QStringLiteral("log")).toString().contains(QStringLiteral("try/except")));
        QVERIFY2(!stepNames(tryExcept).contains(QStringLiteral("build")),
                 describe(tryExcept).constData()); // rejected before building

        QVERIFY2(status(syntax) == QLatin1String("compile_error"), describe(syntax).constData());
        QVERIFY(syntax.json.value(QStringLiteral("log")).toString().contains(QStringLiteral("line 3")));

        QVERIFY2(status(cppError) == QLatin1String("compile_error"), describe(cppError).constData());
        QVERIFY2(cppError.json.value(QStringLiteral("log")).toString().contains(QStringLiteral("undeclared_name")),
                 describe(cppError).constData());

        // The same file again: its build is taken from the cache, the verdict is the same.
        auto again = startEval(problem, data(dir + QStringLiteral("scale_shift_clamp_square_fused.py")));
        const Outcome second = finish(*again);
        QVERIFY2(second.exitCode == 0, describe(second).constData());
        QVERIFY2(second.err.contains("step build (reused"), describe(second).constData());
    }

    // Device cuda with a torch that has no CUDA (Debian's): absent, with the reason, never simulated.
    void cudaDeviceWithoutCudaIsAbsent()
    {
        if (!m_absent.isEmpty())
            QSKIP(qPrintable(m_absent));
        QProcessEnvironment env = environment();
        env.insert(QStringLiteral("AUTOCOMP_KERNELBENCH_DEVICE"), QStringLiteral("cuda"));
        const Outcome targets = cli({QStringLiteral("targets")}, env);
        const QString listing = QString::fromUtf8(targets.out);
        if (listing.contains(QRegularExpression(QStringLiteral("(^|\\n)kernelbench  available"))))
            QSKIP("this machine's torch has CUDA and a GPU: device cuda is available here");
        QVERIFY2(QRegularExpression(QStringLiteral("(^|\\n)kernelbench  absent .*\\n    absent: .*device cuda: (this "
                                                   "torch is built without CUDA|torch finds no CUDA device)"))
                     .match(listing)
                     .hasMatch(),
                 qPrintable(listing));
        const Outcome eval = cli({QStringLiteral("eval"), QStringLiteral("--target"), QStringLiteral("kernelbench"),
                                  QStringLiteral("--problem"), QStringLiteral("level1/1_NewGELU"),
                                  QStringLiteral("--start")},
                                 env);
        QCOMPARE(eval.exitCode, 1);
        QVERIFY2(eval.err.contains("target 'kernelbench' is absent on this machine: device cuda"),
                 describe(eval).constData());
    }

    void wholeRunFindsTheFusedKernel()
    {
        if (!m_absent.isEmpty())
            QSKIP(qPrintable(m_absent));
        test::FakeLlmServer server;
        QVERIFY(server.listen());
        QString error;
        QVERIFY2(server.loadScript(data(QStringLiteral("kernelbench_e2e_script.yaml")), &error), qPrintable(error));
        const QString storePath = m_dir.filePath(QStringLiteral("runs.sqlite"));
        QProcessEnvironment env = environment();
        env.insert(QStringLiteral("VLLM_API_BASE"), server.baseUrl().toString() + QStringLiteral("/v1"));
        QProcess process;
        process.setProcessEnvironment(env);
        QSignalSpy finished(&process, &QProcess::finished);
        process.start(qEnvironmentVariable("AUTOCOMP_CLI"),
                      {QStringLiteral("run"), data(QStringLiteral("kernelbench_e2e.yaml")), QStringLiteral("--store"),
                       storePath, QStringLiteral("--json")});
        QVERIFY(process.waitForStarted(10000));
        QVERIFY(finished.wait(900000)); // this thread's event loop serves the LLM server meanwhile
        const QByteArray out = process.readAllStandardOutput(), err = process.readAllStandardError();
        QVERIFY2(process.exitCode() == 0, err.constData());
        const QJsonObject summary = QJsonDocument::fromJson(out).object();
        QCOMPARE(summary.value(QStringLiteral("state")).toString(), QStringLiteral("finished"));
        QCOMPARE(summary.value(QStringLiteral("unit")).toString(), QStringLiteral("ms"));

        auto store = RunStore::open(storePath, &error);
        QVERIFY2(store, qPrintable(error));
        const qint64 runId = summary.value(QStringLiteral("run_id")).toInteger();
        int correct = 0, incorrect = 0;
        for (const Candidate &c : store->candidates(runId)) {
            if (c.origin == CandidateOrigin::Root) {
                QCOMPARE(toString(c.status), QStringLiteral("correct")); // the reference as the start
                continue;
            }
            if (c.status == CandidateStatus::Correct) {
                ++correct;
                QVERIFY(c.code.contains(QStringLiteral("load_inline")));
            } else if (c.status == CandidateStatus::Incorrect) {
                ++incorrect;
            }
        }
        QCOMPARE(correct, 1);
        QCOMPARE(incorrect, 1);
        // The prompts carry the kernelbench agent's rules and the judge's feedback on the start.
        bool rules = false, feedback = false;
        for (const LlmCall &call : store->llmCalls(runId)) {
            rules = rules || call.prompt.contains(QStringLiteral("load_inline"));
            feedback = feedback || call.prompt.contains(QStringLiteral("eager reference"));
        }
        QVERIFY(rules);
        QVERIFY(feedback);
    }
};

QTEST_GUILESS_MAIN(TestKernelBench)
#include "tst_kernelbench.moc"
