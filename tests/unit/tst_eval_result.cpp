// One verdict type: every status an evaluation can end with goes through EvalResult::fromJson/toJson on
// each path that carries it, and comes out as it went in: a judge's result.json read by the local
// evaluator, `autocomp eval --json` (what a remote host answers), the remote executors' reading of that
// answer (no_hardware included), and the JSONL archive's evaluation steps.
#include "eval/evaluator.h"
#include "eval/remote_executor.h"
#include "model/eval_result.h"
#include "catalog/repository.h"
#include "exchange/run_archive.h"
#include "store/run_store.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

using namespace autocomp;

namespace {

bool writeFile(const QString &path, const QByteArray &bytes)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile file(path);
    return file.open(QIODevice::WriteOnly | QIODevice::Truncate) && file.write(bytes) == bytes.size();
}

// A judge's result.json with this status, correct only when it is ok.
QByteArray judgeJson(const QString &status)
{
    const bool ok = status == QLatin1String("ok");
    QJsonObject o{{QStringLiteral("status"), status},
                  {QStringLiteral("correct"), ok},
                  {QStringLiteral("feedback"), QJsonArray{QStringLiteral("feedback of %1").arg(status)}},
                  {QStringLiteral("flags"), QJsonArray{QStringLiteral("flag of %1").arg(status)}},
                  {QStringLiteral("log"), QStringLiteral("log of %1").arg(status)}};
    if (ok)
        o.insert(QStringLiteral("metrics"),
                 QJsonObject{{QStringLiteral("latency_ms"), QJsonObject{{QStringLiteral("median"), 2.5}}}});
    return QJsonDocument(o).toJson(QJsonDocument::Compact);
}

} // namespace

class TestEvalResult : public QObject
{
    Q_OBJECT

    QTemporaryDir m_data;

    // Targets whose judge writes the candidate's text as its result.json: the candidate is the verdict.
    // `verdict` has its hardware; `verdict-nohw` has none, so its timed step is left out (no_hardware).
    void writeTargets()
    {
        const QByteArray judge =
            R"(  - {name: judge, role: judge, run: [sh, -c, "cat {candidate} > {judgedir}/result.json"], timeout_s: 30, fail_status: error}
)";
        QVERIFY(writeFile(m_data.filePath(QStringLiteral("backends/verdict/backend.yaml")),
                          "name: verdict\nextension: json\nmetric: latency_ms\nsteps:\n" + judge));
        QVERIFY(writeFile(
            m_data.filePath(QStringLiteral("backends/verdict-nohw/backend.yaml")),
            "name: verdict-nohw\nextension: json\nmetric: latency_ms\nhardware_check: [sh, -c, \"echo no such card; "
            "exit 1\"]\n"
            "steps:\n"
                + judge
                + "  - {name: bench, role: judge, needs_hardware: true, run: [sh, -c, \"exit 0\"], timeout_s: 30}\n"));
        for (const char *target : {"verdict", "verdict-nohw"}) {
            const QString dir = m_data.filePath(QStringLiteral("sols/%1/p").arg(QLatin1String(target)));
            QVERIFY(writeFile(dir + QStringLiteral("/problem.yaml"),
                              "name: p\nstart: start.json\nreference: start.json\nshapes: [{N: 1}]\n"));
            QVERIFY(writeFile(dir + QStringLiteral("/start.json"), judgeJson(QStringLiteral("ok"))));
        }
    }

    EvalResult evaluateLocally(const QString &targetName, const QByteArray &candidate)
    {
        Repository repository(QStringList{m_data.path()});
        QString error;
        const auto target = repository.target(targetName, &error);
        const auto problem = target ? repository.problem(targetName, QStringLiteral("p"), &error) : std::nullopt;
        if (!problem) {
            qWarning("%s", qPrintable(error));
            return {};
        }
        Evaluator evaluator(EvaluationConfig{});
        EvalResult result;
        bool done = false;
        EvalJob *job = evaluator.evaluate(*target, *problem, QString::fromUtf8(candidate));
        connect(job, &EvalJob::finished, this, [&](const EvalResult &r) {
            result = r;
            done = true;
        });
        if (!QTest::qWaitFor([&] { return done; }, 60000))
            qWarning("the evaluation did not finish");
        return result;
    }

    // `autocomp eval --json` of the candidate: the far side of a remote evaluation prints exactly this.
    QJsonObject evalJson(const QString &targetName, const QByteArray &candidate)
    {
        const QString file = m_data.filePath(QStringLiteral("candidate.json"));
        if (!writeFile(file, candidate))
            return {};
        QProcess cli;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("AUTOCOMP_DATA_DIR"), m_data.path());
        cli.setProcessEnvironment(env);
        cli.start(qEnvironmentVariable("AUTOCOMP_CLI"),
                  {QStringLiteral("eval"), QStringLiteral("--target"), targetName, QStringLiteral("--problem"),
                   QStringLiteral("p"), QStringLiteral("--code"), file, QStringLiteral("--no-baseline"),
                   QStringLiteral("--json")});
        if (!cli.waitForFinished(60000))
            return {};
        const QByteArray out = cli.readAllStandardOutput();
        const QJsonObject o = QJsonDocument::fromJson(out).object();
        if (o.isEmpty())
            qWarning("autocomp eval printed: %s\n%s", out.constData(), cli.readAllStandardError().constData());
        return o;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_data.isValid());
        writeTargets();
    }

    void oneListOfStatuses()
    {
        QCOMPARE(EvalResult::judgeStatuses(),
                 (QStringList{QStringLiteral("ok"), QStringLiteral("compile_error"), QStringLiteral("incorrect"),
                              QStringLiteral("timeout"), QStringLiteral("crash"), QStringLiteral("rejected")}));
        QCOMPARE(EvalResult::statuses(),
                 EvalResult::judgeStatuses() << QStringLiteral("error") << QStringLiteral("no_hardware"));
    }

    // toJson then fromJson gives back every field, for every status; a judge may not claim the
    // evaluator's own statuses, and "cancelled" is no verdict on either side.
    void jsonRoundTrip_data()
    {
        QTest::addColumn<QString>("status");
        for (const QString &status : EvalResult::statuses())
            QTest::newRow(qPrintable(status)) << status;
    }

    void jsonRoundTrip()
    {
        QFETCH(QString, status);
        EvalResult in;
        in.status = status;
        in.correct = status == QLatin1String("ok");
        in.metrics = QJsonObject{{QStringLiteral("latency_ms"), 1.25}};
        in.feedback = QStringList{QStringLiteral("a"), QStringLiteral("b")};
        in.flags = QStringList{QStringLiteral("f")};
        in.log = QStringLiteral("line 1\nline 2");
        StepResult step;
        step.name = QStringLiteral("check");
        step.command = QStringList{QStringLiteral("judge"), QStringLiteral("--seed"), QStringLiteral("7")};
        step.exitCode = 1;
        step.crashed = true;
        step.timedOut = true;
        step.outputFlooded = true;
        step.setupFailed = true;
        step.durationMs = 12.5;
        step.log = QStringLiteral("--- check-worker0 (the candidate's process, ended by a signal) ---");
        in.steps << step;

        QString error;
        const auto out = EvalResult::fromJson(in.toJson(), EvalResult::Source::Evaluation, QStringLiteral("latency_ms"),
                                              &error);
        QVERIFY2(out, qPrintable(error));
        QCOMPARE(out->status, in.status);
        QCOMPARE(out->correct, in.correct);
        QCOMPARE(out->metrics, in.metrics);
        QCOMPARE(out->feedback, in.feedback);
        QCOMPARE(out->flags, in.flags);
        QCOMPARE(out->log, in.log);
        QCOMPARE(out->steps.size(), 1);
        const StepResult &s = out->steps.first();
        QCOMPARE(s.name, step.name);
        QCOMPARE(s.command, step.command);
        QCOMPARE(s.exitCode, step.exitCode);
        QCOMPARE(s.crashed, step.crashed);
        QCOMPARE(s.timedOut, step.timedOut);
        QCOMPARE(s.outputFlooded, step.outputFlooded);
        QCOMPARE(s.setupFailed, step.setupFailed);
        QCOMPARE(s.durationMs, step.durationMs);
        QCOMPARE(s.log, step.log);

        const bool judgeMay = EvalResult::judgeStatuses().contains(status);
        QCOMPARE(bool(EvalResult::fromJson(in.toJson(), EvalResult::Source::Judge, QString(), &error)), judgeMay);
        if (!judgeMay)
            QVERIFY2(error.contains(QLatin1String("'status' must be one of")), qPrintable(error));
    }

    void notAVerdict_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::newRow("cancelled") << QByteArray(R"({"status":"cancelled","correct":false})");
        QTest::newRow("unknown") << QByteArray(R"({"status":"great","correct":true})");
        QTest::newRow("correct not a boolean") << QByteArray(R"({"status":"ok","correct":"yes"})");
        QTest::newRow("metrics not an object") << QByteArray(R"({"status":"incorrect","correct":false,"metrics":[1]})");
        QTest::newRow("correct without the metric")
            << QByteArray(R"({"status":"ok","correct":true,"metrics":{"gflops":3}})");
    }

    void notAVerdict()
    {
        QFETCH(QByteArray, json);
        const QJsonObject o = QJsonDocument::fromJson(json).object();
        QString error;
        QVERIFY(!EvalResult::fromJson(o, EvalResult::Source::Evaluation, QStringLiteral("latency_ms"), &error));
        QVERIFY(!error.isEmpty());
        error.clear();
        const EvalResult remote = RemoteExecutor::resultFromJson(o, QStringLiteral("latency_ms"), &error);
        QVERIFY(!error.isEmpty());
        QVERIFY(remote.status.isEmpty());
    }

    // Each status through the local evaluator (a judge's result.json, or the evaluator's own verdict), then
    // through `autocomp eval --json` and the remote executors' reading of that output: the same status,
    // correctness, feedback and log at every stage.
    void everyPath_data()
    {
        QTest::addColumn<QString>("target");
        QTest::addColumn<QByteArray>("candidate");
        QTest::addColumn<QString>("status");
        for (const QString &status : EvalResult::judgeStatuses())
            QTest::newRow(qPrintable(QStringLiteral("judge says %1").arg(status)))
                << QStringLiteral("verdict") << judgeJson(status) << status;
        // The evaluator's own verdicts: a judge cannot claim them, and a target without its hardware ends so.
        QTest::newRow("error: a judge claims no_hardware")
            << QStringLiteral("verdict") << judgeJson(QStringLiteral("no_hardware")) << QStringLiteral("error");
        QTest::newRow("error: not JSON") << QStringLiteral("verdict") << QByteArray("{\"status\":")
                                         << QStringLiteral("error");
        QTest::newRow("no_hardware") << QStringLiteral("verdict-nohw") << judgeJson(QStringLiteral("incorrect"))
                                     << QStringLiteral("no_hardware");
    }

    void everyPath()
    {
        QFETCH(QString, target);
        QFETCH(QByteArray, candidate);
        QFETCH(QString, status);
        const bool correct = status == QLatin1String("ok");

        const EvalResult local = evaluateLocally(target, candidate);
        QVERIFY2(local.status == status, qPrintable(local.status + QStringLiteral(": ") + local.log));
        QCOMPARE(local.correct, correct);
        if (EvalResult::judgeStatuses().contains(status)) {
            QCOMPARE(local.log, QStringLiteral("log of %1").arg(status));
            QCOMPARE(local.feedback, QStringList{QStringLiteral("feedback of %1").arg(status)});
        }
        if (correct)
            QCOMPARE(local.metricValue(QStringLiteral("latency_ms")), 2.5);

        const QJsonObject printed = evalJson(target, candidate);
        QCOMPARE(printed.value(QStringLiteral("status")).toString(), status);
        QCOMPARE(printed.value(QStringLiteral("log")).toString(), local.log);
        QString error;
        const auto parsed = EvalResult::fromJson(printed, EvalResult::Source::Evaluation, QStringLiteral("latency_ms"),
                                                 &error);
        QVERIFY2(parsed, qPrintable(error));
        QCOMPARE(parsed->status, status);
        QCOMPARE(parsed->correct, correct);
        QCOMPARE(parsed->feedback, local.feedback);
        QVERIFY(!parsed->steps.isEmpty());
        QCOMPARE(parsed->steps.first().name, QStringLiteral("judge"));

        // The near side of an SSH or Slurm evaluation reads that output.
        const EvalResult remote = RemoteExecutor::resultFromJson(printed, QStringLiteral("latency_ms"), &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(remote.status, status);
        QCOMPARE(remote.correct, correct);
        QCOMPARE(remote.log, local.log);
        QCOMPARE(remote.flags, parsed->flags);
        QCOMPARE(remote.steps.size(), parsed->steps.size());
    }

    // The JSONL archive carries each candidate's evaluation steps: exported and imported unchanged, for
    // a candidate of every status.
    void jsonlArchiveKeepsSteps()
    {
        QString error;
        auto store = RunStore::open(m_data.filePath(QStringLiteral("source.sqlite")), &error);
        QVERIFY2(store, qPrintable(error));
        RunInfo run;
        run.target = QStringLiteral("cpu");
        run.problem = QStringLiteral("gemm");
        run.agent = QStringLiteral("cpu");
        run.metric = QStringLiteral("latency_ms");
        const qint64 runId = store->createRun(run);
        QVERIFY(runId > 0);
        QHash<QString, EvalResult> byCode;
        for (const QString &status : EvalResult::statuses()) {
            Candidate c;
            c.runId = runId;
            c.code = QStringLiteral("// ") + status;
            c.status = status == QLatin1String("ok") ? CandidateStatus::Correct : candidateStatusFromString(status);
            const qint64 id = store->addCandidate(c);
            QVERIFY(id > 0);
            EvalResult r;
            r.status = status;
            StepResult step;
            step.name = QStringLiteral("judge");
            step.command = QStringList{QStringLiteral("judge"), status};
            step.exitCode = status == QLatin1String("ok") ? 0 : 1;
            step.timedOut = status == QLatin1String("timeout");
            step.crashed = status == QLatin1String("crash");
            step.durationMs = 3.5;
            step.log = QStringLiteral("log of %1").arg(status);
            r.steps << step;
            QVERIFY(store->addEvaluation(id, r));
            byCode.insert(c.code, r);
        }
        const QString archive = m_data.filePath(QStringLiteral("run.jsonl"));
        QVERIFY2(exportRunJsonl(*store, runId, archive, &error), qPrintable(error));
        auto target = RunStore::open(m_data.filePath(QStringLiteral("target.sqlite")), &error);
        QVERIFY2(target, qPrintable(error));
        const qint64 imported = importRunJsonl(*target, archive, &error);
        QVERIFY2(imported > 0, qPrintable(error));
        const QList<Candidate> candidates = target->candidates(imported);
        QCOMPARE(candidates.size(), byCode.size());
        for (const Candidate &c : candidates) {
            const EvalResult expected = byCode.value(c.code);
            const QList<StepResult> steps = target->evaluationSteps(c.id);
            QCOMPARE(steps.size(), 1);
            const StepResult &in = expected.steps.first();
            const StepResult &out = steps.first();
            QCOMPARE(out.name, in.name);
            QCOMPARE(out.command, in.command);
            QCOMPARE(out.exitCode, in.exitCode);
            QCOMPARE(out.timedOut, in.timedOut);
            QCOMPARE(out.crashed, in.crashed);
            QCOMPARE(out.durationMs, in.durationMs);
            QCOMPARE(out.log, in.log);
        }
    }
};

QTEST_GUILESS_MAIN(TestEvalResult)
#include "tst_eval_result.moc"
