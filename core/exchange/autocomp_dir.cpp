#include "exchange/autocomp_dir.h"
#include "exchange/autocomp_dir_files.h"
#include "exchange/python_repr.h"
#include "store/run_store.h"

#include <QDir>
#include <QFileInfo>
#include <QHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QMap>
#include <QSet>

#include <algorithm>
#include <cmath>
#include <optional>
#include <tuple>

// Writing a run as an Autocomp output directory: the layout is described in autocomp_dir.h; the import is in
// autocomp_dir_import.cpp.

namespace autocomp {

namespace {

bool lessScore(const Candidate &a, const Candidate &b)
{
    const double sa = a.hasScore() ? a.score : INFINITY;
    const double sb = b.hasScore() ? b.score : INFINITY;
    if (sa != sb)
        return sa < sb;
    return a.id < b.id;
}

QString guessExtension(const QString &code)
{
    if (code.contains(QLatin1String("#include")) || code.contains(QLatin1String("__global__")))
        return QStringLiteral(".cpp");
    if (code.contains(QLatin1String("import ")) || code.contains(QLatin1String("def ")))
        return QStringLiteral(".py");
    return QStringLiteral(".txt");
}

struct Usage
{
    qint64 calls = 0;
    qint64 in = 0;
    qint64 out = 0;
    double ms = 0;

    void add(const LlmCall &call) { ++calls, in += call.tokensIn, out += call.tokensOut, ms += call.latencyMs; }
};

QJsonObject usageJson(const QMap<QString, Usage> &byModel)
{
    QJsonObject o;
    for (auto it = byModel.begin(); it != byModel.end(); ++it)
        o.insert(it.key(),
                 QJsonObject{{QStringLiteral("calls"), it->calls},
                             {QStringLiteral("input_tokens"), it->in},
                             {QStringLiteral("output_tokens"), it->out},
                             {QStringLiteral("duration_s"), std::round(it->ms) / 1000.0}});
    return o;
}

// An evaluation result as Autocomp's evaluator writes it (eval-results-iter-N/code_I_result.txt).
QJsonObject resultJson(const Candidate &c)
{
    QJsonObject o = c.metrics;
    const bool correct = c.status == CandidateStatus::Correct && c.hasScore();
    o.insert(QStringLiteral("correct"), correct);
    o.insert(QStringLiteral("compiled"), c.status != CandidateStatus::CompileError);
    if (correct)
        o.insert(QStringLiteral("latency"), c.score);
    else
        o.insert(QStringLiteral("latency"), QJsonValue::Null);
    o.insert(QStringLiteral("stdout"), QString());
    o.insert(QStringLiteral("stderr"), c.error);
    o.insert(QStringLiteral("status"), toString(c.status));
    if (!c.feedback.isEmpty())
        o.insert(QStringLiteral("feedback"), QJsonArray::fromStringList(c.feedback));
    return o;
}

// One run written as Autocomp's BeamSearchStrategy writes its output, a kind of file at a time: the beams
// (candidates-iter-N), per iteration the plans, the code, the evaluation results and the repairs, the metrics, and
// the run's files (run_metrics.json, run_metadata.json, best_candidate_so_far).
struct Exporter
{
    Exporter(RunStore &s, const RunInfo &r, const QString &path, QString *e) : store(s), run(r), dir(path), error(e) {}

    RunStore &store;
    const RunInfo &run;
    QDir dir;
    QString *error;

    QList<Candidate> all;
    QHash<qint64, Candidate> byId;
    QHash<qint64, LlmCall> callById;
    QHash<qint64, LlmCall> codeCallOf; // candidate id -> its latest code call
    int lastIteration = 0;
    QList<Candidate> roots;
    QList<QList<Candidate>> beams; // beams[n]: the beam after iteration n, best first

    // Totals over the iterations.
    QJsonArray iterationMetrics;
    qint64 totalIn = 0, totalOut = 0;
    double totalLlmS = 0, totalEvalS = 0, totalS = 0;
    QSet<QString> planModels, codeModels;

    // One plan of an iteration (one per plan call, or plan slot), with the candidates that implement it.
    struct Plan
    {
        QString key;
        int parent = 0;
        QString model;
        int slot = 0;
        int sample = 0;
        QString text;
        qint64 callId = 0;
        QList<Candidate> impls;
    };
    // One implementation of an iteration: code model, Q (its plan's index) and sample give its file names.
    struct Impl
    {
        QString model;
        int q = 0;
        int sample = 0;
        Candidate c;
    };
    // What one iteration's files add up to (metrics-iter-N.json).
    struct IterationUsage
    {
        QMap<QString, Usage> plan;
        QMap<QString, Usage> code;
        double evalMs = 0;
    };

    QString sub(const QString &name) const
    {
        QDir().mkpath(dir.filePath(name));
        return dir.filePath(name);
    }

    bool write()
    {
        readRun();
        buildBeams();
        if (!writeBeams() || !writeRootResults())
            return false;
        for (int n = 1; n <= lastIteration; ++n)
            if (!writeIteration(n))
                return false;
        return writeRunFiles();
    }

    void readRun()
    {
        all = store.candidates(run.id);
        for (const Candidate &c : std::as_const(all))
            byId.insert(c.id, c);
        for (const LlmCall &call : store.llmCalls(run.id)) {
            callById.insert(call.id, call);
            // Only the calls that wrote a candidate's code; a parent's own calls (isa filter, one-shot menu, example
            // selection) and the plan and score calls are not its code.
            static const QSet<QString> s_codePhases{QStringLiteral("code"), QStringLiteral("fix"),
                                                    QStringLiteral("direct")};
            if (call.candidateId && s_codePhases.contains(call.phase))
                codeCallOf.insert(call.candidateId, call);
        }
        lastIteration = run.iteration;
        for (const Candidate &c : std::as_const(all))
            lastIteration = std::max(lastIteration, c.iteration);
    }

    // The beam after each iteration. Only the last one is stored (in_beam); an earlier one is exactly the set of
    // parents that the next iteration's candidates grew from. Autocomp lists a beam best first.
    void buildBeams()
    {
        for (const Candidate &c : std::as_const(all))
            if (c.origin == CandidateOrigin::Root || c.parentId == 0)
                roots << c;
        std::sort(roots.begin(), roots.end(), [](const Candidate &a, const Candidate &b) { return a.id < b.id; });
        beams << roots;
        for (int n = 1; n <= lastIteration; ++n) {
            QList<Candidate> beam;
            QSet<qint64> seen;
            if (n == lastIteration) {
                for (const Candidate &c : std::as_const(all))
                    if (c.inBeam)
                        beam << c;
            } else {
                for (const Candidate &c : std::as_const(all))
                    if (c.iteration == n + 1 && c.parentId && byId.contains(c.parentId) && !seen.contains(c.parentId)) {
                        seen.insert(c.parentId);
                        beam << byId.value(c.parentId);
                    }
            }
            if (beam.isEmpty())
                beam = beams.last();
            std::sort(beam.begin(), beam.end(), lessScore);
            beams << beam;
        }
    }

    QString repr(const Candidate &c, int depth) const
    {
        const bool hasParent = c.parentId && byId.contains(c.parentId) && depth < 10000;
        QStringList feedback;
        for (const QString &f : c.feedback)
            feedback << pyString(f);
        return QStringLiteral(
                   "CodeCandidate(parent=%1,\nplan=%2,\ncode=%3,\nscore=%4,\ntranslation_score=%5,\nhw_feedback=[%6],\n"
                   "plan_gen_model=%7,\ncode_gen_model=%8,\nstdout=None,\nstderr=%9)")
            .arg(hasParent ? repr(byId.value(c.parentId), depth + 1) : QStringLiteral("None"),
                 c.origin == CandidateOrigin::Root ? QStringLiteral("None") : pyTriple(c.plan), pyTriple(c.code),
                 c.hasScore() && c.status == CandidateStatus::Correct ? pyFloat(c.score)
                                                                      : QStringLiteral("float('inf')"),
                 c.metrics.contains(QStringLiteral("translation_score"))
                     ? pyFloat(c.metrics.value(QStringLiteral("translation_score")).toDouble())
                     : QStringLiteral("None"),
                 feedback.join(QStringLiteral(", ")),
                 c.planModel.isEmpty() ? QStringLiteral("None") : pyString(fileModel(c.planModel)),
                 c.codeModel.isEmpty() ? QStringLiteral("None") : pyString(fileModel(c.codeModel)),
                 c.error.isEmpty() ? QStringLiteral("None") : pyString(c.error));
    }

    bool writeBeams()
    {
        for (int n = 0; n < beams.size(); ++n) {
            const QString d = sub(QStringLiteral("candidates-iter-%1").arg(n));
            for (int k = 0; k < beams[n].size(); ++k)
                if (!writeText(QDir(d).filePath(QStringLiteral("candidate_%1.txt").arg(k)), repr(beams[n][k], 0),
                               error))
                    return false;
        }
        return true;
    }

    // The original code's evaluation.
    bool writeRootResults()
    {
        if (roots.isEmpty())
            return true;
        const QString d = sub(QStringLiteral("eval-results-iter-0"));
        for (int i = 0; i < roots.size(); ++i)
            if (!writeJson(QDir(d).filePath(QStringLiteral("code_%1_result.txt").arg(i)), resultJson(roots[i]), error))
                return false;
        return true;
    }

    bool writeIteration(int n)
    {
        const QList<Plan> plans = plansOf(n);
        IterationUsage usage;
        QList<Impl> impls;
        if (!writePlansAndCode(n, plans, &impls, &usage) || !writeResults(n, impls, &usage)
            || !writeRepairs(n, impls, &usage))
            return false;
        return writeIterationMetrics(n, int(impls.size()), usage);
    }

    // The plans of iteration n, in Q order, each with its implementations.
    QList<Plan> plansOf(int n) const
    {
        const QList<Candidate> &parents = beams[n - 1];
        auto parentIndex = [&](qint64 id) -> int {
            for (int i = 0; i < parents.size(); ++i)
                if (parents[i].id == id)
                    return i;
            return -1;
        };
        QList<Candidate> cands;
        for (const Candidate &c : all)
            if (c.iteration == n && c.origin != CandidateOrigin::Root && c.origin != CandidateOrigin::Fix
                && c.origin != CandidateOrigin::Human && parentIndex(c.parentId) >= 0)
                cands << c;
        std::sort(cands.begin(), cands.end(), [](const Candidate &a, const Candidate &b) {
            return std::tie(a.planSlot, a.sample, a.id) < std::tie(b.planSlot, b.sample, b.id);
        });

        QList<Plan> plans;
        QHash<QString, int> planIndex;
        for (const Candidate &c : std::as_const(cands)) {
            const QString key = c.planCallId ? QStringLiteral("call%1").arg(c.planCallId)
                : c.planSlot >= 0            ? QStringLiteral("slot%1").arg(c.planSlot)
                                             : QStringLiteral("cand%1").arg(c.id);
            if (!planIndex.contains(key)) {
                planIndex.insert(key, int(plans.size()));
                plans << Plan{key, parentIndex(c.parentId), fileModel(c.planModel), c.planSlot, 0, c.plan, c.planCallId,
                              {}};
            }
            plans[planIndex.value(key)].impls << c;
        }
        // A failed plan request has no plan: Autocomp has no file for it.
        plans.removeIf([](const Plan &p) { return p.text.isEmpty(); });
        // S: the sample index per (parent, model), in plan-slot order. Q: model-major, then parent, then sample.
        {
            QHash<QString, int> counter;
            for (Plan &p : plans)
                p.sample = counter[QStringLiteral("%1\x1f%2").arg(p.parent).arg(p.model)]++;
        }
        std::stable_sort(plans.begin(), plans.end(), [](const Plan &a, const Plan &b) {
            return std::tie(a.model, a.parent, a.sample) < std::tie(b.model, b.parent, b.sample);
        });
        return plans;
    }

    // generated-plans-iter-N and generated-code-iter-N; *impls gets the implementations written, in I order.
    bool writePlansAndCode(int n, const QList<Plan> &plans, QList<Impl> *impls, IterationUsage *usage)
    {
        const QString planDir = sub(QStringLiteral("generated-plans-iter-%1").arg(n));
        const QString codeDir = sub(QStringLiteral("generated-code-iter-%1").arg(n));
        for (int q = 0; q < plans.size(); ++q) {
            const Plan &p = plans[q];
            planModels.insert(p.model);
            if (!writePlan(planDir, p, usage))
                return false;
            QHash<QString, int> counter;
            QList<Candidate> sorted = p.impls;
            std::stable_sort(sorted.begin(), sorted.end(), [](const Candidate &a, const Candidate &b) {
                return std::tie(a.sample, a.id) < std::tie(b.sample, b.id);
            });
            for (const Candidate &c : std::as_const(sorted)) {
                if (c.code.isEmpty())
                    continue; // a failed plan request or a plan still waiting for code
                const QString model = fileModel(c.codeModel);
                codeModels.insert(model);
                const Impl impl{model, q, counter[model]++, c};
                *impls << impl;
                if (!writeCode(codeDir, p, impl, usage))
                    return false;
            }
        }
        std::stable_sort(impls->begin(), impls->end(), [](const Impl &a, const Impl &b) {
            return std::tie(a.model, a.q, a.sample) < std::tie(b.model, b.q, b.sample);
        });
        return true;
    }

    bool writePlan(const QString &planDir, const Plan &p, IterationUsage *usage)
    {
        const QString stem = QStringLiteral("parent%1_%2_%3").arg(p.parent).arg(p.model).arg(p.sample);
        if (p.callId && callById.contains(p.callId)) {
            const LlmCall &call = callById[p.callId];
            usage->plan[p.model].add(call);
            if (!writeText(QDir(planDir).filePath(QStringLiteral("prompt_%1.txt").arg(stem)), call.prompt, error))
                return false;
            if (!call.response.isEmpty() && call.response != p.text
                && !writeText(QDir(planDir).filePath(QStringLiteral("plan_%1_full.txt").arg(stem)), call.response,
                              error))
                return false;
        }
        return p.text.isEmpty()
            || writeText(QDir(planDir).filePath(QStringLiteral("plan_%1.txt").arg(stem)), p.text, error);
    }

    bool writeCode(const QString &codeDir, const Plan &p, const Impl &impl, IterationUsage *usage)
    {
        const Candidate &c = impl.c;
        const QString base = QStringLiteral("%1_%2_%3").arg(p.parent).arg(impl.q).arg(impl.model);
        const LlmCall call = codeCallOf.value(c.id);
        if (call.id) {
            usage->code[impl.model].add(call);
            const QString promptPath = QDir(codeDir).filePath(QStringLiteral("prompt_%1.txt").arg(base));
            if (!QFileInfo::exists(promptPath) && !writeText(promptPath, call.prompt, error))
                return false;
        }
        if (!writeText(QDir(codeDir).filePath(QStringLiteral("impl_%1_%2.txt").arg(base).arg(impl.sample)), c.code,
                       error))
            return false;
        // Autocomp resumes from the _full response (it extracts the last fenced block).
        const QString full = !call.response.isEmpty() ? call.response : QStringLiteral("```\n%1\n```\n").arg(c.code);
        return writeText(QDir(codeDir).filePath(QStringLiteral("impl_%1_%2_full.txt").arg(base).arg(impl.sample)), full,
                         error);
    }

    bool writeResults(int n, const QList<Impl> &impls, IterationUsage *usage)
    {
        const QString evalDir = sub(QStringLiteral("eval-results-iter-%1").arg(n));
        for (int i = 0; i < impls.size(); ++i) {
            if (!writeJson(QDir(evalDir).filePath(QStringLiteral("code_%1_result.txt").arg(i)), resultJson(impls[i].c),
                           error))
                return false;
            for (const StepResult &step : store.evaluationSteps(impls[i].c.id))
                usage->evalMs += step.durationMs;
        }
        return true;
    }

    // Repairs: Autocomp's reimplemented-code-iter-N/reimplement_failed_K_MODEL_S.txt, K indexing the failed
    // implementations that left output (in code_I order), evaluated into
    // eval-reimplemented-results-iter-N/code_J_result.txt (J: model, then K, then S).
    struct Fix
    {
        QString model;
        int k = 0;
        int sample = 0;
        Candidate c;
    };

    QList<Fix> fixesOf(int n, const QList<Impl> &impls) const
    {
        QList<qint64> failed;
        for (const Impl &im : impls)
            if (!(im.c.status == CandidateStatus::Correct && im.c.hasScore()) && !im.c.error.isEmpty())
                failed << im.c.id;
        QList<Fix> fixes;
        QHash<QString, int> counter;
        QList<Candidate> fixCands;
        for (const Candidate &c : all)
            if (c.iteration == n && c.origin == CandidateOrigin::Fix && !c.code.isEmpty())
                fixCands << c;
        // Which failed implementation a repair is for: fix_of; in archives older than fix_of, the first failed
        // implementation of the same plan not yet repaired.
        QSet<qint64> repaired;
        for (const Candidate &c : std::as_const(fixCands)) {
            qint64 target = failed.contains(c.fixOf) ? c.fixOf : 0;
            for (int pass = 0; !target && pass < 2; ++pass)
                for (qint64 id : std::as_const(failed)) {
                    const Candidate &f = byId[id];
                    if (!repaired.contains(id) && f.parentId == c.parentId
                        && (pass == 1 || f.planCallId == c.planCallId)) {
                        target = id;
                        break;
                    }
                }
            if (!target)
                continue;
            repaired.insert(target);
            const QString model = fileModel(c.codeModel);
            const int k = int(failed.indexOf(target));
            fixes << Fix{model, k, counter[QStringLiteral("%1\x1f%2").arg(k).arg(model)]++, c};
        }
        std::stable_sort(fixes.begin(), fixes.end(), [](const Fix &a, const Fix &b) {
            return std::tie(a.model, a.k, a.sample) < std::tie(b.model, b.k, b.sample);
        });
        return fixes;
    }

    bool writeRepairs(int n, const QList<Impl> &impls, IterationUsage *usage)
    {
        const QList<Fix> fixes = fixesOf(n, impls);
        if (fixes.isEmpty())
            return true;
        const QString fixDir = sub(QStringLiteral("reimplemented-code-iter-%1").arg(n));
        const QString fixEvalDir = sub(QStringLiteral("eval-reimplemented-results-iter-%1").arg(n));
        for (int j = 0; j < fixes.size(); ++j) {
            const Fix &f = fixes[j];
            const QString base = QStringLiteral("failed_%1_%2").arg(f.k).arg(f.model);
            const LlmCall call = codeCallOf.value(f.c.id);
            if (call.id) {
                usage->code[f.model].add(call);
                const QString promptPath = QDir(fixDir).filePath(QStringLiteral("reimplement_prompt_%1.txt").arg(base));
                if (!QFileInfo::exists(promptPath) && !writeText(promptPath, call.prompt, error))
                    return false;
            }
            const QString full = !call.response.isEmpty() ? call.response
                                                          : QStringLiteral("```\n%1\n```\n").arg(f.c.code);
            if (!writeText(QDir(fixDir).filePath(QStringLiteral("reimplement_%1_%2.txt").arg(base).arg(f.sample)),
                           f.c.code, error)
                || !writeText(
                    QDir(fixDir).filePath(QStringLiteral("reimplement_%1_%2_full.txt").arg(base).arg(f.sample)), full,
                    error)
                || !writeJson(QDir(fixEvalDir).filePath(QStringLiteral("code_%1_result.txt").arg(j)), resultJson(f.c),
                              error))
                return false;
            for (const StepResult &step : store.evaluationSteps(f.c.id))
                usage->evalMs += step.durationMs;
        }
        return true;
    }

    bool writeIterationMetrics(int n, int implementations, const IterationUsage &usage)
    {
        double planMs = 0, codeMs = 0;
        for (const Usage &u : usage.plan)
            planMs += u.ms, totalIn += u.in, totalOut += u.out;
        for (const Usage &u : usage.code)
            codeMs += u.ms, totalIn += u.in, totalOut += u.out;
        // Wall-clock durations are not stored; these are the sums of the calls' latencies and the steps' durations.
        const double iterS = (planMs + codeMs + usage.evalMs) / 1000.0;
        QJsonObject m{{QStringLiteral("iteration"), n},
                      {QStringLiteral("plan_duration_s"), std::round(planMs) / 1000.0},
                      {QStringLiteral("code_duration_s"), std::round(codeMs) / 1000.0},
                      {QStringLiteral("evaluation"),
                       QJsonObject{{QStringLiteral("duration_s"), std::round(usage.evalMs) / 1000.0},
                                   {QStringLiteral("num_candidates"), implementations}}},
                      {QStringLiteral("plan_generation"), usageJson(usage.plan)},
                      {QStringLiteral("code_generation"), usageJson(usage.code)},
                      {QStringLiteral("iteration_total_s"), std::round(iterS * 1000) / 1000.0}};
        if (!writeJson(dir.filePath(QStringLiteral("metrics-iter-%1.json").arg(n)), m, error))
            return false;
        iterationMetrics.append(m);
        totalLlmS += (planMs + codeMs) / 1000.0;
        totalEvalS += usage.evalMs / 1000.0;
        totalS += iterS;
        return true;
    }

    bool writeRunFiles()
    {
        // Best: the run's own record, else the lowest correct score.
        std::optional<Candidate> best;
        if (run.bestCandidateId && byId.contains(run.bestCandidateId)) {
            best = byId.value(run.bestCandidateId);
        } else {
            for (const Candidate &c : std::as_const(all))
                if (c.status == CandidateStatus::Correct && c.hasScore() && (!best || c.score < best->score))
                    best = c;
        }

        QJsonObject runMetrics{{QStringLiteral("run_total_s"), std::round(totalS * 1000) / 1000.0},
                               {QStringLiteral("iterations"), iterationMetrics},
                               {QStringLiteral("total_input_tokens"), totalIn},
                               {QStringLiteral("total_output_tokens"), totalOut},
                               {QStringLiteral("total_llm_duration_s"), std::round(totalLlmS * 1000) / 1000.0},
                               {QStringLiteral("total_eval_duration_s"), std::round(totalEvalS * 1000) / 1000.0}};
        if (best && best->hasScore())
            runMetrics.insert(QStringLiteral("best_score"), best->score);
        if (!writeJson(dir.filePath(QStringLiteral("run_metrics.json")), runMetrics, error)
            || !writeJson(dir.filePath(QStringLiteral("run_metadata.json")), metadata(), error))
            return false;
        return !best
            || writeText(dir.filePath(QStringLiteral("best_candidate_so_far") + guessExtension(best->code)), best->code,
                         error);
    }

    QJsonObject metadata() const
    {
        QStringList planList(planModels.begin(), planModels.end()), codeList(codeModels.begin(), codeModels.end());
        planList.sort();
        codeList.sort();
        return {{QStringLiteral("problem"), run.problem},
                {QStringLiteral("metric"), QStringLiteral("latency")},
                {QStringLiteral("plan_models"), QJsonArray::fromStringList(planList)},
                {QStringLiteral("code_models"), QJsonArray::fromStringList(codeList)},
                {QStringLiteral("beam_size"), beams.isEmpty() ? 0 : int(beams.last().size())},
                {QStringLiteral("autocomp_workbench"),
                 QJsonObject{{QStringLiteral("run_id"), run.id},
                             {QStringLiteral("target"), run.target},
                             {QStringLiteral("problem"), run.problem},
                             {QStringLiteral("agent"), run.agent},
                             {QStringLiteral("label"), run.label},
                             {QStringLiteral("metric"), run.metric},
                             {QStringLiteral("unit"), run.metricUnit},
                             {QStringLiteral("state"), toString(run.state)},
                             {QStringLiteral("stop_reason"), run.stopReason},
                             {QStringLiteral("config_yaml"), run.configYaml},
                             {QStringLiteral("usd"), run.usd},
                             {QStringLiteral("schedule"), QJsonArray::fromStringList(run.schedule)}}}};
    }
};

} // namespace

bool exportAutocompDir(RunStore &store, qint64 runId, const QString &dirPath, QString *error)
{
    const auto run = store.run(runId);
    if (!run) {
        *error = QStringLiteral("no run %1 in %2").arg(runId).arg(store.path());
        return false;
    }
    QDir dir(dirPath);
    if (dir.exists() && !dir.isEmpty()) {
        *error = QStringLiteral("%1: the directory is not empty").arg(dirPath);
        return false;
    }
    if (!QDir().mkpath(dirPath)) {
        *error = QStringLiteral("%1: cannot create the directory").arg(dirPath);
        return false;
    }
    return Exporter(store, *run, dirPath, error).write();
}

} // namespace autocomp
