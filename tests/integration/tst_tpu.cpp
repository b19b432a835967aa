// The tpu target without a TPU, for real: jax from PyPI (the target's virtual environment, made by
// packaging/setup-python-env.sh tpu) runs the candidates' Pallas kernels in Pallas' TPU interpreter on
// the CPU. Skips, with the reason, where that environment is absent.
//
//   - every shipped problem's start code passes the correctness check, and the evaluation ends with
//     no_hardware: checked, never timed, no latency made up;
//   - hand-written candidates: a better-tiled kernel is correct, a wrong one is incorrect with the
//     element that differs, a syntax error is a compile error with its line, static rejections (imports,
//     try/except, interpret=), a fallback to plain JAX, a kernel Mosaic refuses (found by exporting for the TPU)
//     is a compile error, a kernel that never finishes is a timeout;
//   - the sandbox: a candidate cannot read the problem's reference nor write outside its sandbox;
//   - the timing report's parser on the exact text the bench step prints;
//   - a target whose Python has no jax is listed absent with what it needs;
//   - a compile-only search against the local LLM server: a wrong first attempt goes through the fix
//     loop and the fixed kernel passes the check.
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
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <memory>

using namespace autocomp;

class TestTpu : public QObject
{
    Q_OBJECT

private:
    using Outcome = autocomp::test::CliOutcome;

    static QString data(const QString &name)
    {
        return qEnvironmentVariable("AUTOCOMP_TEST_DATA") + QStringLiteral("/integration/data/tpu/") + name;
    }

    QProcessEnvironment environment() const
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("XDG_DATA_HOME"), m_dir.filePath(QStringLiteral("data")));
        env.insert(QStringLiteral("XDG_CACHE_HOME"), m_dir.filePath(QStringLiteral("cache")));
        // The environment found in this process's own data directory (the children's is a temporary one).
        env.insert(QStringLiteral("AUTOCOMP_TPU_PYTHON"), m_python);
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

    std::unique_ptr<QProcess> startEval(const QString &problem, const QString &code, QProcessEnvironment env = {}) const
    {
        QStringList arguments{QStringLiteral("eval"), QStringLiteral("--target"), QStringLiteral("tpu"),
                              QStringLiteral("--problem"), problem};
        if (code.isEmpty())
            arguments << QStringLiteral("--start");
        else
            arguments << QStringLiteral("--code") << code;
        arguments << QStringLiteral("--json");
        return start(arguments, env.isEmpty() ? environment() : env);
    }

    // Two evaluations at a time (the machines that run the tests have two cores).
    QList<Outcome> evaluate(const QList<QPair<QString, QString>> &jobs) const
    {
        return autocomp::test::runTwoAtATime(
            jobs.size(), [&](qsizetype i) { return startEval(jobs.at(i).first, jobs.at(i).second); });
    }

    static QByteArray describe(const Outcome &o) { return o.describe(); }
    static QString status(const Outcome &o) { return o.json.value(QStringLiteral("status")).toString(); }
    static QString log(const Outcome &o) { return o.json.value(QStringLiteral("log")).toString(); }
    static QStringList stepNames(const Outcome &o)
    {
        QStringList names;
        for (const QJsonValue &s : o.json.value(QStringLiteral("steps")).toArray())
            names << s.toObject().value(QStringLiteral("name")).toString();
        return names;
    }

    bool writeFile(const QString &path, const QByteArray &content) const
    {
        QFile f(path);
        return f.open(QIODevice::WriteOnly) && f.write(content) == content.size();
    }

    QTemporaryDir m_dir;
    QString m_python;
    QString m_absent;
    QString m_shipped;

private Q_SLOTS:
    void initTestCase()
    {
        const QString cli = qEnvironmentVariable("AUTOCOMP_CLI");
        QVERIFY2(!cli.isEmpty() && QFileInfo(cli).isExecutable(), "AUTOCOMP_CLI must name the built autocomp binary");
        QVERIFY(m_dir.isValid());
        m_shipped = qEnvironmentVariable("AUTOCOMP_DATA_DIR");
        m_python = qEnvironmentVariableIsSet("AUTOCOMP_TPU_PYTHON")
            ? qEnvironmentVariable("AUTOCOMP_TPU_PYTHON")
            : QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation)
                + QStringLiteral("/autocomp-workbench/venvs/tpu/bin/python");
        qputenv("AUTOCOMP_TPU_PYTHON", m_python.toLocal8Bit());
        Repository repository(QStringList{m_shipped});
        QString error;
        const auto target = repository.target(QStringLiteral("tpu"), &error);
        QVERIFY2(target, qPrintable(error));
        QCOMPARE(target->language, QStringLiteral("python"));
        QCOMPARE(target->fileExtension, QStringLiteral("py"));
        if (!target->available())
            m_absent = target->absenceReason()
                + QStringLiteral(" (packaging/setup-python-env.sh tpu makes the environment at ") + m_python
                + QLatin1Char(')');
        // Every shipped problem loads, with a Pallas start.
        const QStringList names = repository.problemNames(QStringLiteral("tpu"));
        QCOMPARE(names,
                 (QStringList{QStringLiteral("layernorm"), QStringLiteral("matmul"), QStringLiteral("softmax"),
                              QStringLiteral("vector_add")}));
        for (const QString &name : names) {
            const auto problem = repository.problem(QStringLiteral("tpu"), name, &error);
            QVERIFY2(problem, qPrintable(error));
            QVERIFY(problem->startCode().contains(QStringLiteral("pl.pallas_call(")));
            QVERIFY(problem->startCode().contains(QStringLiteral("def solution(")));
        }
    }

    // The default python setting lives in the user's data directory, wherever that is.
    void pythonSettingFollowsTheDataDirectory()
    {
        qunsetenv("AUTOCOMP_TPU_PYTHON");
        const QByteArray saved = qgetenv("XDG_DATA_HOME");
        qputenv("XDG_DATA_HOME", m_dir.filePath(QStringLiteral("elsewhere")).toLocal8Bit());
        Repository repository(QStringList{m_shipped});
        QString error;
        const auto target = repository.target(QStringLiteral("tpu"), &error);
        if (saved.isNull())
            qunsetenv("XDG_DATA_HOME");
        else
            qputenv("XDG_DATA_HOME", saved);
        qputenv("AUTOCOMP_TPU_PYTHON", m_python.toLocal8Bit());
        QVERIFY2(target, qPrintable(error));
        QString python;
        for (const auto &setting : target->settings)
            if (setting.first == QLatin1String("python"))
                python = setting.second;
        QCOMPARE(python, m_dir.filePath(QStringLiteral("elsewhere/autocomp-workbench/venvs/tpu/bin/python")));
    }

    // A Python without jax: the target is absent and says what it needs; nothing is evaluated.
    void absentWithoutJax()
    {
        QProcessEnvironment env = environment();
        env.insert(QStringLiteral("AUTOCOMP_TPU_PYTHON"), QStringLiteral("/usr/bin/python3"));
        if (QProcess::execute(QStringLiteral("/usr/bin/python3"), {QStringLiteral("-c"), QStringLiteral("import jax")})
            == 0)
            QSKIP("/usr/bin/python3 has jax here: no Python without jax to show the absent target with");
        const Outcome targets = cli({QStringLiteral("targets")}, env);
        const QString listing = QString::fromUtf8(targets.out);
        QVERIFY2(QRegularExpression(QStringLiteral("(^|\\n)tpu  absent .*\\n    absent: .*/usr/bin/python3 cannot "
                                                   "import jax with Pallas .*setup-python-env.sh tpu"))
                     .match(listing)
                     .hasMatch(),
                 qPrintable(listing));
        const Outcome eval = cli({QStringLiteral("eval"), QStringLiteral("--target"), QStringLiteral("tpu"),
                                  QStringLiteral("--problem"), QStringLiteral("softmax"), QStringLiteral("--start")},
                                 env);
        QCOMPARE(eval.exitCode, 1);
        QVERIFY2(eval.err.contains("target 'tpu' is absent on this machine"), describe(eval).constData());
    }

    // Without a TPU the target is usable for correctness only: listed with the reason, never timed.
    void listedWithoutHardware()
    {
        if (!m_absent.isEmpty())
            QSKIP(qPrintable(m_absent));
        const Outcome targets = cli({QStringLiteral("targets")});
        const QString listing = QString::fromUtf8(targets.out);
        if (QRegularExpression(QStringLiteral("(^|\\n)tpu  available")).match(listing).hasMatch())
            QSKIP("JAX sees a TPU on this machine: the target times kernels here");
        QVERIFY2(QRegularExpression(
                     QStringLiteral(
                         "(^|\\n)tpu  compile only .*\\n    no hardware: no TPU: JAX [0-9.]+ sees only cpu devices"))
                     .match(listing)
                     .hasMatch(),
                 qPrintable(listing));
    }

    void startCodesAreCorrect()
    {
        if (!m_absent.isEmpty())
            QSKIP(qPrintable(m_absent));
        const QStringList problems{QStringLiteral("vector_add"), QStringLiteral("matmul"), QStringLiteral("softmax"),
                                   QStringLiteral("layernorm")};
        QList<QPair<QString, QString>> jobs;
        for (const QString &p : problems)
            jobs << qMakePair(p, QString());
        const QList<Outcome> outcomes = evaluate(jobs);
        for (qsizetype i = 0; i < outcomes.size(); ++i) {
            const Outcome &o = outcomes.at(i);
            // Checked in the interpreter, then the timed steps left out: no_hardware, not a failure.
            QVERIFY2(status(o) == QLatin1String("no_hardware"), describe(o).constData());
            QCOMPARE(o.json.value(QStringLiteral("correct")).toBool(true), false);
            QVERIFY2(log(o).contains(
                         QStringLiteral("correct on 6 input sets (rtol=0.001, atol=0.001) on Pallas' TPU interpreter")),
                     describe(o).constData());
            QVERIFY2(log(o).contains(QStringLiteral("no TPU")), describe(o).constData());
            QVERIFY(o.json.value(QStringLiteral("metrics")).toObject().isEmpty()); // no latency without a TPU
            QCOMPARE(stepNames(o), (QStringList{QStringLiteral("static"), QStringLiteral("check")}));
            QVERIFY2(o.json.value(QStringLiteral("feedback"))
                         .toArray()
                         .first()
                         .toString()
                         .startsWith(QStringLiteral("correct at ")),
                     describe(o).constData());
        }
    }

    void handWrittenCandidates()
    {
        if (!m_absent.isEmpty())
            QSKIP(qPrintable(m_absent));
        const QString softmax = QStringLiteral("softmax");
        const QList<Outcome> o = evaluate({{QStringLiteral("matmul"), data(QStringLiteral("matmul_tiled.py"))},
                                           {softmax, data(QStringLiteral("softmax_wrong.py"))},
                                           {softmax, data(QStringLiteral("syntax_error.py"))},
                                           {softmax, data(QStringLiteral("softmax_static_rejects.py"))},
                                           {softmax, data(QStringLiteral("softmax_fallback.py"))},
                                           {softmax, data(QStringLiteral("softmax_rows.py"))},
                                           {softmax, data(QStringLiteral("softmax_mosaic_refuses.py"))}});
        const Outcome &tiled = o.at(0), &wrong = o.at(1), &syntax = o.at(2), &rejects = o.at(3), &fallback = o.at(4),
                      &rows = o.at(5), &mosaic = o.at(6);

        QVERIFY2(status(tiled) == QLatin1String("no_hardware")
                     && log(tiled).contains(QStringLiteral("correct on 6 input sets")),
                 describe(tiled).constData());
        QVERIFY2(status(rows) == QLatin1String("no_hardware")
                     && log(rows).contains(QStringLiteral("correct on 6 input sets")),
                 describe(rows).constData());

        QVERIFY2(wrong.exitCode == 3 && status(wrong) == QLatin1String("incorrect"), describe(wrong).constData());
        QVERIFY2(QRegularExpression(QStringLiteral("wrong result at rows=8,cols=128 \\(input set 1\\): output 0: "
                                                   "[0-9]+ of 1024 elements differ beyond rtol=0.001, atol=0.001"))
                     .match(log(wrong))
                     .hasMatch(),
                 describe(wrong).constData());

        QVERIFY2(status(syntax) == QLatin1String("compile_error"), describe(syntax).constData());
        QVERIFY2(log(syntax).contains(QStringLiteral("line 3: Python syntax error")), describe(syntax).constData());
        QCOMPARE(stepNames(syntax), QStringList{QStringLiteral("static")});

        QVERIFY2(status(rejects) == QLatin1String("rejected"), describe(rejects).constData());
        QVERIFY2(log(rejects).contains(QStringLiteral("line 2: import os is not allowed")),
                 describe(rejects).constData());
        QVERIFY2(log(rejects).contains(QStringLiteral("line 15: try/except is not allowed")),
                 describe(rejects).constData());
        QVERIFY2(log(rejects).contains(QStringLiteral("line 16: do not pass interpret=")),
                 describe(rejects).constData());
        QCOMPARE(stepNames(rejects), QStringList{QStringLiteral("static")}); // refused before anything ran

        QVERIFY2(status(fallback) == QLatin1String("rejected"), describe(fallback).constData());
        QVERIFY2(log(fallback).contains(QStringLiteral("work outside the kernels: solution runs"))
                     && log(fallback).contains(QStringLiteral("exponential"))
                     && log(fallback).contains(QStringLiteral("reduce(maximum)")),
                 describe(fallback).constData());

        // Correct in Pallas' interpreter, refused by Mosaic (a block of 3 rows): the export for the TPU finds the
        // compile error a TPU would, without one.
        QVERIFY2(status(mosaic) == QLatin1String("compile_error"), describe(mosaic).constData());
        QVERIFY2(log(mosaic).contains(QStringLiteral("Pallas TPU lowering"))
                     && log(mosaic).contains(QStringLiteral("during lowering solution for the TPU")),
                 describe(mosaic).constData());
    }

    void hangingKernelTimesOut()
    {
        if (!m_absent.isEmpty())
            QSKIP(qPrintable(m_absent));
        QProcessEnvironment env = environment();
        env.insert(QStringLiteral("AUTOCOMP_TPU_CALL_TIMEOUT"), QStringLiteral("20"));
        auto process = startEval(QStringLiteral("softmax"), data(QStringLiteral("softmax_hang.py")), env);
        const Outcome o = finish(*process);
        QVERIFY2(status(o) == QLatin1String("timeout"), describe(o).constData());
        QVERIFY2(log(o).contains(QStringLiteral("the candidate did not answer within 20 s (request 'check')")),
                 describe(o).constData());
    }

    // NumPy's file API is refused before anything runs (the static check's denied names); that the candidate's
    // process, were it to run, sees neither the problem's folder nor anything writable is tst_reward_hacking's
    // tpu-nostatic rows (read_reference.py, write_outside.py), without the static step.
    void fileApiRefused()
    {
        if (!m_absent.isEmpty())
            QSKIP(qPrintable(m_absent));
        const QString reference = m_shipped + QStringLiteral("/sols/tpu/softmax/reference.py");
        QVERIFY(QFileInfo::exists(reference));
        // Next to the reference: a folder the candidate's process does not see (its /tmp is private too).
        const QString outside = m_shipped + QStringLiteral("/sols/tpu/softmax/escaped.bin");
        const QByteArray body =
            "import jax\nimport numpy as np\nfrom jax.experimental import pallas as pl\n\n\n"
            "def copy_kernel(x_ref, o_ref):\n    o_ref[...] = x_ref[...]\n\n\n"
            "def solution(x):\n    ACTION\n"
            "    return pl.pallas_call(copy_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)\n";
        const QString reader = m_dir.filePath(QStringLiteral("reader.py")),
                      writer = m_dir.filePath(QStringLiteral("writer.py"));
        const QByteArray read = QByteArray("np.fromfile('") + reference.toUtf8() + QByteArray("', dtype=np.uint8)");
        const QByteArray write = QByteArray("np.zeros(4).tofile('") + outside.toUtf8() + QByteArray("')");
        QVERIFY(writeFile(reader, QByteArray(body).replace("ACTION", read)));
        QVERIFY(writeFile(writer, QByteArray(body).replace("ACTION", write)));
        const QList<Outcome> o = evaluate({{QStringLiteral("softmax"), reader}, {QStringLiteral("softmax"), writer}});
        for (const Outcome &attempt : o) {
            QVERIFY2(status(attempt) == QLatin1String("rejected"), describe(attempt).constData());
            QCOMPARE(stepNames(attempt), QStringList{QStringLiteral("static")});
        }
        QVERIFY2(log(o.at(0)).contains(QStringLiteral("numpy.fromfile is not on this target's allow-list")),
                 describe(o.at(0)).constData());
        QVERIFY2(log(o.at(1)).contains(QStringLiteral(".tofile is not allowed")), describe(o.at(1)).constData());
        const bool escaped = QFileInfo::exists(outside);
        QFile::remove(outside);
        QVERIFY(!escaped);
    }

    // The bench step's report, parsed by the report step: the exact lines tpu_output.py reads.
    void timingReportParser_data()
    {
        QTest::addColumn<QByteArray>("report");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("expected"); // the parsed JSON, or the error

        QTest::newRow("bench step's report")
            << QByteArray("# 3 trials after 3 warm-ups at M=512,N=512,K=512 on TPU v5 lite\nTrial 1: 0.4123 ms\nTrial "
                          "2: 0.4098 ms\n"
                          "Trial 3: 0.4101 ms\nLatency: 0.4101 ms\n")
            << 0
            << QStringLiteral(
                   R"({"latency_ms": 0.4101, "trials_ms": [0.4123, 0.4098, 0.4101], "utilization_pct": null})");
        QTest::newRow("Autocomp's lines, with utilization")
            << QByteArray("compiling...\nLatency: 1.25 ms\nUtilization: 37.5%\n") << 0
            << QStringLiteral(R"({"latency_ms": 1.25, "trials_ms": [], "utilization_pct": 37.5})");
        QTest::newRow("microseconds") << QByteArray("Latency: 250 us\n") << 0
                                      << QStringLiteral(
                                             R"({"latency_ms": 0.25, "trials_ms": [], "utilization_pct": null})");
        QTest::newRow("even number of trials")
            << QByteArray("Trial 1: 1 ms\nTrial 2: 3 ms\nLatency: 2 ms\n") << 0
            << QStringLiteral(R"({"latency_ms": 2.0, "trials_ms": [1.0, 3.0], "utilization_pct": null})");
        QTest::newRow("no latency") << QByteArray("Trial 1: 0.5 ms\n") << 1
                                    << QStringLiteral("no 'Latency: X ms' line");
        QTest::newRow("not a number") << QByteArray("Trial 1: 0.5 ms\nLatency: fast ms\n") << 1
                                      << QStringLiteral(
                                             "line 2: not a '<key>: <number> <unit>' line: 'Latency: fast ms'");
        QTest::newRow("no unit") << QByteArray("Latency: 0.5\n") << 1
                                 << QStringLiteral("line 1: not a '<key>: <number> <unit>' line");
        QTest::newRow("two latencies") << QByteArray("Latency: 0.5 ms\nLatency: 0.4 ms\n") << 1
                                       << QStringLiteral("line 2: a second Latency line");
        QTest::newRow("latency is not the median")
            << QByteArray("Trial 1: 1 ms\nTrial 2: 2 ms\nTrial 3: 9 ms\nLatency: 1 ms\n") << 1
            << QStringLiteral("Latency 1 ms is not the median of the 3 trials (2 ms)");
        QTest::newRow("a trial missing") << QByteArray("Trial 1: 1 ms\nTrial 3: 2 ms\nLatency: 1.5 ms\n") << 1
                                         << QStringLiteral("trials [1, 3] are not numbered 1..2");
    }

    void timingReportParser()
    {
        QFETCH(QByteArray, report);
        QFETCH(int, exitCode);
        QFETCH(QString, expected);
        const QString python = QStandardPaths::findExecutable(QStringLiteral("python3"));
        if (python.isEmpty())
            QSKIP("no python3 on PATH");
        const QString file = m_dir.filePath(QStringLiteral("timing.txt"));
        QVERIFY(writeFile(file, report));
        QProcess process;
        process.start(python,
                      {m_shipped + QStringLiteral("/backends/tpu/tools/tpu_output.py"), QStringLiteral("parse"), file});
        QVERIFY(process.waitForFinished(60000));
        const QString out = QString::fromUtf8(process.readAllStandardOutput()).trimmed();
        const QString err = QString::fromUtf8(process.readAllStandardError()).trimmed();
        QCOMPARE(process.exitCode(), exitCode);
        if (exitCode == 0)
            QCOMPARE(out, expected);
        else
            QVERIFY2(err.startsWith(file + QStringLiteral(": ") + expected), qPrintable(err));
    }

    // A search without a TPU (evaluation.compile_only): the wrong first attempt is fixed, the fix checked.
    void compileOnlySearchFixesAWrongKernel()
    {
        if (!m_absent.isEmpty())
            QSKIP(qPrintable(m_absent));
        test::FakeLlmServer server;
        QVERIFY(server.listen());
        QString error;
        QVERIFY2(server.loadScript(data(QStringLiteral("tpu_e2e_script.yaml")), &error), qPrintable(error));
        const QString storePath = m_dir.filePath(QStringLiteral("runs.sqlite"));
        QProcessEnvironment env = environment();
        env.insert(QStringLiteral("VLLM_API_BASE"), server.baseUrl().toString() + QStringLiteral("/v1"));
        QProcess process;
        process.setProcessEnvironment(env);
        QSignalSpy finished(&process, &QProcess::finished);
        process.start(qEnvironmentVariable("AUTOCOMP_CLI"),
                      {QStringLiteral("run"), data(QStringLiteral("tpu_e2e.yaml")), QStringLiteral("--store"),
                       storePath, QStringLiteral("--json")});
        QVERIFY(process.waitForStarted(10000));
        QVERIFY(finished.wait(900000)); // this thread's event loop serves the LLM server meanwhile
        const QByteArray out = process.readAllStandardOutput(), err = process.readAllStandardError();
        QVERIFY2(process.exitCode() == 0, err.constData());
        const QJsonObject summary = QJsonDocument::fromJson(out).object();
        QVERIFY2(summary.value(QStringLiteral("state")).toString() == QLatin1String("finished"), out.constData());

        auto store = RunStore::open(storePath, &error);
        QVERIFY2(store, qPrintable(error));
        const qint64 runId = summary.value(QStringLiteral("run_id")).toInteger();
        QMap<QString, int> byStatus;
        Candidate wrong, fixed;
        for (const Candidate &c : store->candidates(runId)) {
            if (c.origin == CandidateOrigin::Root) {
                QCOMPARE(toString(c.status), QStringLiteral("no_hardware")); // checked, not measured
                QVERIFY(!c.hasScore());
                continue;
            }
            ++byStatus[toString(c.status)];
            if (c.status == CandidateStatus::Incorrect)
                wrong = c;
            else if (c.origin == CandidateOrigin::Fix)
                fixed = c;
        }
        QCOMPARE(byStatus.value(QStringLiteral("incorrect")), 1);
        QCOMPARE(byStatus.value(QStringLiteral("no_hardware")), 1);
        QVERIFY2(wrong.error.contains(QStringLiteral("elements differ")), qPrintable(wrong.error));
        QCOMPARE(fixed.fixOf, wrong.id); // the fix of the wrong kernel, with its plan
        QCOMPARE(toString(fixed.status), QStringLiteral("no_hardware"));
        QVERIFY(fixed.code.contains(QStringLiteral("jnp.max(x, axis=-1, keepdims=True)")));
        QVERIFY(!fixed.hasScore());
        // The fix prompt carries the judge's verdict; the plan prompt the agent's Pallas material.
        bool fixPrompt = false, agentMaterial = false;
        for (const LlmCall &call : store->llmCalls(runId)) {
            fixPrompt = fixPrompt
                || (call.prompt.contains(QStringLiteral("Fixed code:"))
                    && call.prompt.contains(QStringLiteral("elements differ beyond rtol=0.001")));
            agentMaterial = agentMaterial || call.prompt.contains(QStringLiteral("BlockSpec"));
        }
        QVERIFY(fixPrompt);
        QVERIFY(agentMaterial);
    }
};

QTEST_GUILESS_MAIN(TestTpu)
#include "tst_tpu.moc"
