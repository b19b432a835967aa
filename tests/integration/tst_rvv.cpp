// The rvv target through the real CLI: clang-16 cross-compiles, the judge runs natively, the worker
// runs under qemu-riscv64 and the TCG plugin counts one kernel call. Skips, with the reason, where the
// target is absent (packaging/install-deps.sh --rvv installs its tools).
//
//   - every shipped rvv problem: the start code is correct, the wrong variant is caught, a
//     hand-vectorized version (tests/integration/data/rvv/<problem>_rvv.cpp) is correct and counts
//     fewer instructions (gemm: at least 10x fewer than the scalar start);
//   - the count is deterministic: five evaluations of one candidate give identical counts, even for
//     a kernel whose path depends on the data;
//   - the lint and the object gate reject counter reads and system calls, however they are spelled;
//   - the agent's code examples compile for the target;
//   - a whole `autocomp run` on rvv/gemm against the local LLM server finds the faster candidate,
//     and its prompts carry the rvv agent and the instruction-count feedback with its unit.
#include "cli_outcome.h"
#include "fake_llm_server.h"
#include "catalog/repository.h"
#include "store/run_store.h"

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

class TestRvv : public QObject
{
    Q_OBJECT

private:
    using Outcome = autocomp::test::CliOutcome;

    static QStringList problems()
    {
        return {QStringLiteral("saxpy"),
                QStringLiteral("gemm"),
                QStringLiteral("softmax"),
                QStringLiteral("layernorm"),
                QStringLiteral("depthwise_conv1d"),
                QStringLiteral("matmul_int8")};
    }

    static QString data(const QString &name)
    {
        return qEnvironmentVariable("AUTOCOMP_TEST_DATA") + QStringLiteral("/integration/data/") + name;
    }

    static std::unique_ptr<QProcess> startEval(const QString &problem, const QString &code)
    {
        auto process = std::make_unique<QProcess>();
        process->setProcessEnvironment(QProcessEnvironment::systemEnvironment());
        process->start(qEnvironmentVariable("AUTOCOMP_CLI"),
                       {QStringLiteral("eval"), QStringLiteral("--target"), QStringLiteral("rvv"),
                        QStringLiteral("--problem"), problem, QStringLiteral("--code"), code,
                        QStringLiteral("--json")});
        return process;
    }

    static Outcome finish(QProcess &process) { return autocomp::test::finishCli(process, 600000); }

    // Evaluations run two at a time (the machines that run the tests have few cores).
    static QList<Outcome> evaluate(const QList<QPair<QString, QString>> &jobs)
    {
        return autocomp::test::runTwoAtATime(
            jobs.size(), [&](qsizetype i) { return startEval(jobs.at(i).first, jobs.at(i).second); }, 600000);
    }

    static QByteArray describe(const Outcome &o) { return o.describe(4000, 2000); }

    static double count(const Outcome &o, const char *metric = "instructions")
    {
        return o.json.value(QStringLiteral("metrics")).toObject().value(QLatin1String(metric)).toDouble(-1);
    }

    QString writeFile(const QString &name, const QByteArray &text)
    {
        const QString path = m_dir.filePath(name);
        QFile file(path);
        if (!file.open(QIODevice::WriteOnly) || file.write(text) != text.size())
            return {};
        return path;
    }

    QTemporaryDir m_dir;
    QString m_absent; // why the rvv tests skip, empty when the target is available

private Q_SLOTS:
    void initTestCase()
    {
        const QString cli = qEnvironmentVariable("AUTOCOMP_CLI");
        QVERIFY2(!cli.isEmpty() && QFileInfo(cli).isExecutable(), "AUTOCOMP_CLI must name the built autocomp binary");
        QVERIFY(m_dir.isValid());
        Repository repository(QStringList{qEnvironmentVariable("AUTOCOMP_DATA_DIR")});
        QString error;
        const auto target = repository.target(QStringLiteral("rvv"), &error);
        QVERIFY2(target, qPrintable(error));
        QCOMPARE(target->metric, QStringLiteral("instructions"));
        QCOMPARE(target->metricUnit, QStringLiteral("instructions"));
        if (!target->available())
            m_absent = target->absenceReason() + QStringLiteral(" (packaging/install-deps.sh --rvv installs it)");
    }

    // Where the tools are missing (here: a PATH without them) the target is listed as absent with
    // what it lacks, and an evaluation refuses to run. Runs whether or not the tools are installed.
    void absentTargetIsListedAndRefused()
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("PATH"), m_dir.filePath(QStringLiteral("empty-path")));
        QProcess targets;
        targets.setProcessEnvironment(env);
        targets.start(qEnvironmentVariable("AUTOCOMP_CLI"), {QStringLiteral("targets")});
        QVERIFY(targets.waitForFinished(60000));
        const QString listing = QString::fromUtf8(targets.readAllStandardOutput());
        QVERIFY2(QRegularExpression(QStringLiteral("\\nrvv  absent .*\\n    missing: clang\\+\\+-16, .*qemu-riscv64"))
                     .match(u'\n' + listing)
                     .hasMatch(),
                 qPrintable(listing));
        QProcess eval;
        eval.setProcessEnvironment(env);
        eval.start(qEnvironmentVariable("AUTOCOMP_CLI"),
                   {QStringLiteral("eval"), QStringLiteral("--target"), QStringLiteral("rvv"),
                    QStringLiteral("--problem"), QStringLiteral("saxpy"), QStringLiteral("--code"),
                    data(QStringLiteral("rvv/saxpy_rvv.cpp"))});
        QVERIFY(eval.waitForFinished(60000));
        const QByteArray err = eval.readAllStandardError();
        QCOMPARE(eval.exitCode(), 1);
        QVERIFY2(err.contains("target 'rvv' is absent on this machine") && err.contains("install-deps.sh --rvv"),
                 err.constData());
    }

    void everyShippedProblemIsCovered()
    {
        Repository repository(QStringList{qEnvironmentVariable("AUTOCOMP_DATA_DIR")});
        QStringList shipped = repository.problemNames(QStringLiteral("rvv"));
        shipped.sort();
        QStringList covered = problems();
        covered.sort();
        QCOMPARE(shipped.join(QLatin1Char(',')), covered.join(QLatin1Char(',')));
    }

    void startCorrectWrongCaughtVectorizedFewer_data()
    {
        QTest::addColumn<QString>("problem");
        for (const QString &p : problems())
            QTest::newRow(qPrintable(p)) << p;
    }

    void startCorrectWrongCaughtVectorizedFewer()
    {
        if (!m_absent.isEmpty())
            QSKIP(qPrintable(m_absent));
        QFETCH(QString, problem);
        Repository repository(QStringList{qEnvironmentVariable("AUTOCOMP_DATA_DIR")});
        QString error;
        const auto loaded = repository.problem(QStringLiteral("rvv"), problem, &error);
        QVERIFY2(loaded, qPrintable(error));
        QVERIFY(!loaded->context.isEmpty());
        QVERIFY(loaded->shapes.size() >= 3);
        const QString wrong = data(QStringLiteral("rvv/%1_wrong.cpp").arg(problem));
        const QString vectorized = data(QStringLiteral("rvv/%1_rvv.cpp").arg(problem));
        QVERIFY(QFileInfo::exists(wrong) && QFileInfo::exists(vectorized));

        const QList<Outcome> o = evaluate({{problem, loaded->startFile}, {problem, vectorized}, {problem, wrong}});
        const Outcome &start = o.at(0), &fast = o.at(1), &bad = o.at(2);
        QVERIFY2(start.exitCode == 0, describe(start).constData());
        QCOMPARE(start.json.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
        QVERIFY2(fast.exitCode == 0, describe(fast).constData());
        QVERIFY2(bad.exitCode == 3, describe(bad).constData());
        QCOMPARE(bad.json.value(QStringLiteral("status")).toString(), QStringLiteral("incorrect"));

        const double startCount = count(start), fastCount = count(fast);
        QVERIFY2(startCount > 0 && fastCount > 0, describe(start).constData());
        // The scalar start has no vector instruction; the hand-vectorized one has.
        QCOMPARE(count(start, "vector_instructions"), 0.0);
        QVERIFY(count(fast, "vector_instructions") > 0);
        QVERIFY(count(fast, "vsetvl_instructions") > 0);
        QVERIFY2(fastCount < startCount, describe(fast).constData());
        if (problem == QLatin1String("gemm"))
            QVERIFY2(startCount >= 10 * fastCount,
                     qPrintable(QStringLiteral("%1 vs %2").arg(startCount).arg(fastCount)));
        // The feedback names the count, its vector share and the candidate's hot block.
        const QJsonArray feedback = fast.json.value(QStringLiteral("feedback")).toArray();
        QVERIFY2(!feedback.isEmpty() && feedback.first().toString().contains(QStringLiteral(" RVV (")),
                 describe(fast).constData());
        QVERIFY2(QJsonDocument(feedback).toJson().contains(QByteArray("hot block in " + problem.toUtf8())),
                 describe(fast).constData());
        qInfo("%s: start %.0f instructions, hand-vectorized %.0f (%.1fx fewer)", qPrintable(problem), startCount,
              fastCount, startCount / fastCount);
    }

    // The agent's code examples are real code: each compiles for the target as a candidate would.
    void agentExamplesCompile()
    {
        if (!m_absent.isEmpty())
            QSKIP(qPrintable(m_absent));
        QFile file(qEnvironmentVariable("AUTOCOMP_DATA_DIR") + QStringLiteral("/agents/rvv/code_examples.md"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(file.readAll());
        const QRegularExpression block(QStringLiteral("```cpp\\n(.*?)```"),
                                       QRegularExpression::DotMatchesEverythingOption);
        int compiled = 0;
        for (auto it = block.globalMatch(text); it.hasNext();) {
            const QString source = writeFile(QStringLiteral("example-%1.cpp").arg(compiled),
                                             it.next().captured(1).toUtf8());
            QVERIFY(!source.isEmpty());
            QProcess cc;
            cc.start(QStringLiteral("clang++-16"),
                     {QStringLiteral("--target=riscv64-linux-gnu"), QStringLiteral("-march=rv64gcv_zvl256b"),
                      QStringLiteral("-O2"), QStringLiteral("-std=c++17"), QStringLiteral("-Wall"),
                      QStringLiteral("-Werror"), QStringLiteral("-c"), source, QStringLiteral("-o"),
                      source + QStringLiteral(".o")});
            QVERIFY(cc.waitForFinished(120000));
            QVERIFY2(cc.exitCode() == 0, cc.readAllStandardError().constData());
            ++compiled;
        }
        QVERIFY(compiled >= 3);
    }

    void countIsIdenticalAcrossEvaluations()
    {
        if (!m_absent.isEmpty())
            QSKIP(qPrintable(m_absent));
        // The scalar start calls libm's expf, whose path depends on its argument: the count's inputs
        // are fixed so that even such a kernel counts the same every time.
        Repository repository(QStringList{qEnvironmentVariable("AUTOCOMP_DATA_DIR")});
        QString error;
        const auto problem = repository.problem(QStringLiteral("rvv"), QStringLiteral("softmax"), &error);
        QVERIFY2(problem, qPrintable(error));
        const QString code = problem->startFile;
        QList<QPair<QString, QString>> jobs;
        for (int i = 0; i < 5; ++i)
            jobs.append({QStringLiteral("softmax"), code});
        const QList<Outcome> o = evaluate(jobs);
        for (const Outcome &r : o)
            QVERIFY2(r.exitCode == 0, describe(r).constData());
        for (const char *metric : {"instructions", "vector_instructions", "vsetvl_instructions"})
            for (const Outcome &r : o)
                QCOMPARE(count(r, metric), count(o.first(), metric));
        // Each evaluation checked its own secret inputs and random shapes; the counted call is the same.
        QVERIFY(count(o.first()) > 0);
    }

    void countersAndSystemCallsAreRejected_data()
    {
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<QString>("flag");
        // Seen in the source by the lint.
        QTest::newRow("rdcycle in inline asm")
            << QByteArray("unsigned long t; asm volatile(\"rdcycle %0\" : \"=r\"(t)); (void)t;")
            << QStringLiteral("static check");
        QTest::newRow("ecall in inline asm")
            << QByteArray("asm volatile(\"li a7, 93\\n ecall\");") << QStringLiteral("static check");
        // Spelled as raw instruction words: only the object gate's disassembly sees them.
        QTest::newRow("csrrs a0,instret as a word")
            << QByteArray("asm volatile(\".word 0xc0202573\" ::: \"a0\");")
            << QStringLiteral("gate: reads or writes a control/status register");
        QTest::newRow("ecall as a word") << QByteArray("asm volatile(\".word 0x00000073\");")
                                         << QStringLiteral("gate: raw system call or trap");
    }

    void countersAndSystemCallsAreRejected()
    {
        if (!m_absent.isEmpty())
            QSKIP(qPrintable(m_absent));
        QFETCH(QByteArray, body);
        QFETCH(QString, flag);
        const QByteArray code = "extern \"C\" void saxpy(int n, float a, const float* x, float* y) {\n    " + body
            + "\n    for (int i = 0; i < n; ++i) y[i] += a * x[i];\n}\n";
        const QString file = writeFile(
            QStringLiteral("hack-%1.cpp")
                .arg(QString::fromLatin1(QTest::currentDataTag()).replace(QLatin1Char(' '), QLatin1Char('_'))),
            code);
        QVERIFY(!file.isEmpty());
        auto process = startEval(QStringLiteral("saxpy"), file);
        const Outcome o = finish(*process);
        QVERIFY2(o.exitCode == 3, describe(o).constData());
        QCOMPARE(o.json.value(QStringLiteral("status")).toString(), QStringLiteral("rejected"));
        bool flagged = false;
        for (const QJsonValue f : o.json.value(QStringLiteral("flags")).toArray())
            flagged = flagged || f.toString().startsWith(flag);
        QVERIFY2(flagged, describe(o).constData());
    }

    void wholeRunFindsTheVectorizedGemm()
    {
        if (!m_absent.isEmpty())
            QSKIP(qPrintable(m_absent));
        test::FakeLlmServer server;
        QVERIFY(server.listen());
        QString error;
        QVERIFY2(server.loadScript(data(QStringLiteral("rvv_gemm_e2e_script.yaml")), &error), qPrintable(error));
        const QString storePath = m_dir.filePath(QStringLiteral("runs.sqlite"));
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("VLLM_API_BASE"), server.baseUrl().toString() + QStringLiteral("/v1"));
        QProcess process;
        process.setProcessEnvironment(env);
        QSignalSpy finished(&process, &QProcess::finished);
        process.start(qEnvironmentVariable("AUTOCOMP_CLI"),
                      {QStringLiteral("run"), data(QStringLiteral("rvv_gemm_e2e.yaml")), QStringLiteral("--store"),
                       storePath, QStringLiteral("--json")});
        QVERIFY(process.waitForStarted(10000));
        // This thread's event loop serves the in-process LLM server meanwhile.
        QVERIFY(finished.wait(600000));
        const QByteArray out = process.readAllStandardOutput(), err = process.readAllStandardError();
        QVERIFY2(process.exitCode() == 0, err.constData());

        const QJsonObject summary = QJsonDocument::fromJson(out).object();
        QCOMPARE(summary.value(QStringLiteral("state")).toString(), QStringLiteral("finished"));
        QCOMPARE(summary.value(QStringLiteral("metric")).toString(), QStringLiteral("instructions"));
        QCOMPARE(summary.value(QStringLiteral("unit")).toString(), QStringLiteral("instructions"));
        // Not milliseconds: the keys that would say so are absent.
        QVERIFY(!summary.contains(QStringLiteral("best_ms")));
        const double baseline = summary.value(QStringLiteral("baseline_score")).toDouble();
        const double best = summary.value(QStringLiteral("best_score")).toDouble();
        QVERIFY2(best > 0 && baseline >= 10 * best, out.constData());

        auto store = RunStore::open(storePath, &error);
        QVERIFY2(store, qPrintable(error));
        const qint64 runId = summary.value(QStringLiteral("run_id")).toInteger();
        int correct = 0, incorrect = 0;
        for (const Candidate &c : store->candidates(runId)) {
            if (c.origin == CandidateOrigin::Root)
                continue;
            if (c.status == CandidateStatus::Correct) {
                ++correct;
                QCOMPARE(c.id, summary.value(QStringLiteral("best_candidate")).toInteger());
                QVERIFY(c.metrics.value(QStringLiteral("vector_instructions")).toDouble() > 0);
            } else if (c.status == CandidateStatus::Incorrect) {
                ++incorrect;
            }
        }
        QCOMPARE(correct, 1);
        QCOMPARE(incorrect, 1);

        // The export carries the unit with the metric.
        const QString exported = m_dir.filePath(QStringLiteral("run.jsonl"));
        QProcess exporter;
        exporter.start(qEnvironmentVariable("AUTOCOMP_CLI"),
                       {QStringLiteral("export"), QString::number(runId), QStringLiteral("--format"),
                        QStringLiteral("jsonl"), QStringLiteral("--out"), exported, QStringLiteral("--store"),
                        storePath});
        QVERIFY(exporter.waitForFinished(60000));
        QVERIFY2(exporter.exitCode() == 0, exporter.readAllStandardError().constData());
        QFile jsonl(exported);
        QVERIFY(jsonl.open(QIODevice::ReadOnly));
        const QJsonObject runLine = QJsonDocument::fromJson(jsonl.readLine()).object();
        QCOMPARE(runLine.value(QStringLiteral("type")).toString(), QStringLiteral("run"));
        QCOMPARE(runLine.value(QStringLiteral("metric")).toString(), QStringLiteral("instructions"));
        QCOMPARE(runLine.value(QStringLiteral("unit")).toString(), QStringLiteral("instructions"));

        // The plan prompts: the rvv agent's material, how the target measures, and the parent's
        // count with its unit and the plugin's feedback.
        int planPrompts = 0;
        const QRegularExpression measured(QStringLiteral("instructions: [0-9]+ instructions"));
        for (const test::RecordedRequest &r : server.requests()) {
            if (r.ruleName != QLatin1String("plan"))
                continue;
            ++planPrompts;
            const QString &prompt = r.lastUserMessage;
            QVERIFY2(prompt.contains(QStringLiteral("The machine: RV64GCV with RVV 1.0")),
                     qPrintable(prompt.left(2000)));
            QVERIFY(prompt.contains(QStringLiteral("__riscv_vsetvl_e32m4")));
            QVERIFY2(prompt.contains(QStringLiteral("QEMU TCG plugin under qemu-riscv64"))
                         && prompt.contains(QStringLiteral("VLEN=256 bits")),
                     qPrintable(prompt));
            QVERIFY2(measured.match(prompt).hasMatch(), qPrintable(prompt));
            QVERIFY(prompt.contains(QStringLiteral("Target settings: vlen=256")));
            QVERIFY(prompt.contains(QStringLiteral(" RVV (0.0%, 0 vsetvl)")));
            QVERIFY(prompt.contains(QStringLiteral("Shapes checked: `M=37,N=45,K=29`")));
            QVERIFY(!prompt.contains(QStringLiteral("Measured on the target hardware")));
        }
        QCOMPARE(planPrompts, 2);
    }
};

QTEST_GUILESS_MAIN(TestRvv)
#include "tst_rvv.moc"
