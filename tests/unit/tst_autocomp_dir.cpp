// Autocomp-style output directories: our runs written in Autocomp's layout (ucb-bar/autocomp,
// autocomp/search/search.py + agents/llm_agent.py), read back, and Autocomp's own directories read in.
#include "menu_invariants.h"
#include "exchange/autocomp_dir.h"
#include "exchange/run_archive.h"
#include "store/run_store.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace Qt::StringLiterals;
using namespace autocomp;

namespace {

QString fileText(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
}

QJsonObject fileJson(const QString &path) { return QJsonDocument::fromJson(fileText(path).toUtf8()).object(); }

void writeFile(const QString &path, const QString &text)
{
    QDir().mkpath(QFileInfo(path).path());
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(text.toUtf8());
}

} // namespace

class TestAutocompDir : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;
    int m_next = 0;

    std::unique_ptr<RunStore> openStore()
    {
        QString error;
        auto store = RunStore::open(m_tmp.filePath(u"store%1.sqlite"_s.arg(m_next++)), &error);
        if (!store)
            qWarning() << error;
        return store;
    }

    qint64 addCall(RunStore &store, qint64 runId, qint64 candidateId, const QString &phase, const QString &model,
                   const QString &prompt, const QString &response)
    {
        LlmCall call;
        call.runId = runId;
        call.candidateId = candidateId;
        call.phase = phase;
        call.provider = u"openai"_s;
        call.model = model;
        call.prompt = prompt;
        call.response = response;
        call.tokensIn = 100;
        call.tokensOut = 20;
        call.latencyMs = 1500;
        call.status = u"ok"_s;
        call.createdAt = QDateTime::currentDateTimeUtc();
        return store.addLlmCall(call);
    }

    // Root, iteration 1 with two plans of two samples each, iteration 2 from the beam {c11, root}.
    struct Built
    {
        qint64 runId = 0;
        qint64 root = 0, c11 = 0, c12 = 0, c13 = 0, c14 = 0, fix13 = 0, c21 = 0, c22 = 0;
    };

    Built buildRun(RunStore &store)
    {
        Built b;
        RunInfo run;
        run.target = u"cpu"_s;
        run.problem = u"gemm"_s;
        run.agent = u"cpu"_s;
        run.configYaml = u"target: cpu\nproblem: gemm\n"_s;
        run.state = RunState::Finished;
        run.label = u"unit test"_s;
        run.metric = u"latency_ms"_s;
        run.createdAt = QDateTime::currentDateTimeUtc();
        run.iteration = 2;
        b.runId = store.createRun(run);

        auto add = [&](qint64 parent, int iteration, const QString &plan, const QString &code, CandidateStatus status,
                       double score, qint64 planCall, int slot, int sample) {
            Candidate c;
            c.runId = b.runId;
            c.parentId = parent;
            c.iteration = iteration;
            c.origin = parent ? CandidateOrigin::Llm : CandidateOrigin::Root;
            if (code.startsWith(u"// repaired"_s)) {
                c.origin = CandidateOrigin::Fix;
                c.fixOf = b.c13;
            }
            c.status = status;
            c.plan = plan;
            c.code = code;
            c.score = score;
            c.planModel = parent ? u"openai::gpt-5.2"_s : QString();
            c.codeModel = parent ? u"openai::gpt-5.2"_s : QString();
            c.planCallId = planCall;
            c.planSlot = slot;
            c.sample = sample;
            if (status == CandidateStatus::Correct)
                c.metrics = QJsonObject{{u"latency_ms"_s, score}};
            if (status == CandidateStatus::CompileError)
                c.error = u"error: expected ';'"_s;
            const qint64 id = store.addCandidate(c);
            if (!code.isEmpty() && parent)
                addCall(store, b.runId, id, c.origin == CandidateOrigin::Fix ? u"fix"_s : u"code"_s, u"gpt-5.2"_s,
                        u"implement: "_s + plan, u"```cpp\n"_s + code + u"\n```"_s);
            return id;
        };
        const QString rootCode = u"#include <cstdio>\nvoid gemm() { printf(\"it's\\n\"); }\n"_s;
        b.root = add(0, 0, QString(), rootCode, CandidateStatus::Correct, 10.0, 0, -1, 0);
        const qint64 p0 = addCall(store, b.runId, 0, u"plan"_s, u"gpt-5.2"_s, u"plan prompt 0"_s,
                                  u"<think>x</think>Tile the loops."_s);
        const qint64 p1 = addCall(store, b.runId, 0, u"plan"_s, u"gpt-5.2"_s, u"plan prompt 1"_s, u"Unroll 'by 4'."_s);
        b.c11 = add(b.root, 1, u"Tile the loops."_s, u"void gemm() { /* tiled */ }"_s, CandidateStatus::Correct, 6.0,
                    p0, 0, 0);
        b.c12 = add(b.root, 1, u"Tile the loops."_s, u"void gemm() { /* tiled 2 */ }"_s, CandidateStatus::Incorrect,
                    NAN, p0, 0, 1);
        b.c13 = add(b.root, 1, u"Unroll 'by 4'."_s, u"void gemm() { x = 'a\\\\n'; }"_s, CandidateStatus::CompileError,
                    NAN, p1, 1, 0);
        b.c14 = add(b.root, 1, u"Unroll 'by 4'."_s, u"void gemm() { /* unrolled */ }"_s, CandidateStatus::Correct, 8.0,
                    p1, 1, 1);
        b.fix13 = add(b.root, 1, u"Unroll 'by 4'."_s, u"// repaired\nvoid gemm() { }"_s, CandidateStatus::Correct, 9.5,
                      p1, 1, 0);
        const qint64 q0 = addCall(store, b.runId, 0, u"plan"_s, u"gpt-5.2"_s, u"plan prompt 2"_s, u"Vectorize."_s);
        const qint64 q1 = addCall(store, b.runId, 0, u"plan"_s, u"gpt-5.2"_s, u"plan prompt 3"_s, u"Prefetch."_s);
        b.c21 = add(b.c11, 2, u"Vectorize."_s, u"void gemm() { /* tiled+simd */ }"_s, CandidateStatus::Correct, 3.0, q0,
                    0, 0);
        b.c22 = add(b.root, 2, u"Prefetch."_s, u"void gemm() { /* prefetch */ }"_s, CandidateStatus::Correct, 9.0, q1,
                    1, 0);
        store.setBeam(b.runId, {b.c21, b.c11});
        auto info = *store.run(b.runId);
        info.bestCandidateId = b.c21;
        info.bestScore = 3.0;
        info.baselineScore = 10.0;
        store.updateRun(info);
        return b;
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_tmp.isValid()); }

    void exportWritesAutocompLayout()
    {
        auto store = openStore();
        QVERIFY(store);
        const Built b = buildRun(*store);
        const QString dir = m_tmp.filePath(u"export1"_s);
        QString error;
        QVERIFY2(exportAutocompDir(*store, b.runId, dir, &error), qPrintable(error));
        const QDir d(dir);

        // Beams: iteration 0 the root; 1: the parents of iteration 2 (c11 at 6, root at 10), best first; 2: in_beam.
        QVERIFY(QFile::exists(d.filePath(u"candidates-iter-0/candidate_0.txt"_s)));
        QVERIFY(!QFile::exists(d.filePath(u"candidates-iter-0/candidate_1.txt"_s)));
        const QString beam1 = fileText(d.filePath(u"candidates-iter-1/candidate_0.txt"_s));
        QVERIFY(beam1.startsWith(u"CodeCandidate(parent=CodeCandidate(parent=None,\nplan=None,"_s));
        QVERIFY(beam1.contains(u"code='''void gemm() { /* tiled */ }''',\nscore=6.0,"_s));
        QVERIFY(beam1.contains(u"plan_gen_model='gpt-5.2'"_s));
        QVERIFY(fileText(d.filePath(u"candidates-iter-1/candidate_1.txt"_s)).contains(u"score=10.0"_s));
        QVERIFY(fileText(d.filePath(u"candidates-iter-0/candidate_0.txt"_s)).contains(u"printf(\"it\\'s\\\\n\")"_s));
        QVERIFY(fileText(d.filePath(u"candidates-iter-2/candidate_0.txt"_s)).contains(u"score=3.0"_s));
        QVERIFY(fileText(d.filePath(u"candidates-iter-2/candidate_1.txt"_s)).contains(u"score=6.0"_s));

        // Plans: plan_parentP_MODEL_S with the prompt and, when it differs, the full response.
        QCOMPARE(fileText(d.filePath(u"generated-plans-iter-1/plan_parent0_gpt-5.2_0.txt"_s)), u"Tile the loops."_s);
        QCOMPARE(fileText(d.filePath(u"generated-plans-iter-1/plan_parent0_gpt-5.2_0_full.txt"_s)),
                 u"<think>x</think>Tile the loops."_s);
        QCOMPARE(fileText(d.filePath(u"generated-plans-iter-1/prompt_parent0_gpt-5.2_0.txt"_s)), u"plan prompt 0"_s);
        QCOMPARE(fileText(d.filePath(u"generated-plans-iter-1/plan_parent0_gpt-5.2_1.txt"_s)), u"Unroll 'by 4'."_s);
        QVERIFY(!QFile::exists(d.filePath(u"generated-plans-iter-1/plan_parent0_gpt-5.2_1_full.txt"_s)));
        // Iteration 2: c11 is parent 0, the root parent 1.
        QCOMPARE(fileText(d.filePath(u"generated-plans-iter-2/plan_parent0_gpt-5.2_0.txt"_s)), u"Vectorize."_s);
        QCOMPARE(fileText(d.filePath(u"generated-plans-iter-2/plan_parent1_gpt-5.2_0.txt"_s)), u"Prefetch."_s);

        // Code: impl_P_Q_MODEL_S (+ _full, Autocomp's resume cache) and prompt_P_Q_MODEL.
        QCOMPARE(fileText(d.filePath(u"generated-code-iter-1/impl_0_0_gpt-5.2_0.txt"_s)),
                 u"void gemm() { /* tiled */ }"_s);
        QCOMPARE(fileText(d.filePath(u"generated-code-iter-1/impl_0_0_gpt-5.2_1.txt"_s)),
                 u"void gemm() { /* tiled 2 */ }"_s);
        QCOMPARE(fileText(d.filePath(u"generated-code-iter-1/impl_0_1_gpt-5.2_1.txt"_s)),
                 u"void gemm() { /* unrolled */ }"_s);
        QVERIFY(fileText(d.filePath(u"generated-code-iter-1/impl_0_1_gpt-5.2_1_full.txt"_s)).startsWith(u"```cpp\n"_s));
        QCOMPARE(fileText(d.filePath(u"generated-code-iter-1/prompt_0_1_gpt-5.2.txt"_s)),
                 u"implement: Unroll 'by 4'."_s);
        QCOMPARE(fileText(d.filePath(u"generated-code-iter-2/impl_1_1_gpt-5.2_0.txt"_s)),
                 u"void gemm() { /* prefetch */ }"_s);

        // Results: code_I_result.txt in implementation order (Q, then S).
        const QJsonObject r0 = fileJson(d.filePath(u"eval-results-iter-1/code_0_result.txt"_s));
        QCOMPARE(r0.value(u"correct"_s).toBool(), true);
        QCOMPARE(r0.value(u"latency"_s).toDouble(), 6.0);
        QCOMPARE(fileJson(d.filePath(u"eval-results-iter-1/code_1_result.txt"_s)).value(u"correct"_s).toBool(), false);
        const QJsonObject r2 = fileJson(d.filePath(u"eval-results-iter-1/code_2_result.txt"_s));
        QCOMPARE(r2.value(u"compiled"_s).toBool(), false);
        QCOMPARE(r2.value(u"stderr"_s).toString(), u"error: expected ';'"_s);
        QCOMPARE(fileJson(d.filePath(u"eval-results-iter-1/code_3_result.txt"_s)).value(u"latency"_s).toDouble(), 8.0);
        QVERIFY(!QFile::exists(d.filePath(u"eval-results-iter-1/code_4_result.txt"_s)));
        QCOMPARE(fileJson(d.filePath(u"eval-results-iter-0/code_0_result.txt"_s)).value(u"latency"_s).toDouble(), 10.0);

        // The repair of c13: K counts failed implementations that left output, and c12 left none, so c13 is K = 0.
        QCOMPARE(fileText(d.filePath(u"reimplemented-code-iter-1/reimplement_failed_0_gpt-5.2_0.txt"_s)),
                 u"// repaired\nvoid gemm() { }"_s);
        QVERIFY(QFile::exists(d.filePath(u"reimplemented-code-iter-1/reimplement_prompt_failed_0_gpt-5.2.txt"_s)));
        QCOMPARE(fileJson(d.filePath(u"eval-reimplemented-results-iter-1/code_0_result.txt"_s))
                     .value(u"latency"_s)
                     .toDouble(),
                 9.5);

        // Metrics and the best.
        const QJsonObject m1 = fileJson(d.filePath(u"metrics-iter-1.json"_s));
        QCOMPARE(m1.value(u"iteration"_s).toInt(), 1);
        QVERIFY(m1.contains(u"plan_duration_s"_s) && m1.contains(u"code_duration_s"_s) && m1.contains(u"evaluation"_s));
        QCOMPARE(
            m1.value(u"plan_generation"_s).toObject().value(u"gpt-5.2"_s).toObject().value(u"input_tokens"_s).toInt(),
            200);
        const QJsonObject rm = fileJson(d.filePath(u"run_metrics.json"_s));
        QCOMPARE(rm.value(u"iterations"_s).toArray().size(), 2);
        QCOMPARE(rm.value(u"total_input_tokens"_s).toInt(), 4 * 100 + 7 * 100);
        QCOMPARE(rm.value(u"best_score"_s).toDouble(), 3.0);
        QCOMPARE(fileText(d.filePath(u"best_candidate_so_far.txt"_s)), u"void gemm() { /* tiled+simd */ }"_s);

        // Not over a directory that holds something.
        QVERIFY(!exportAutocompDir(*store, b.runId, dir, &error));
        QVERIFY(error.contains(u"not empty"_s));
    }

    void roundTrip()
    {
        auto store = openStore();
        QVERIFY(store);
        const Built b = buildRun(*store);
        const QString dir = m_tmp.filePath(u"export2"_s);
        QString error;
        QVERIFY2(exportAutocompDir(*store, b.runId, dir, &error), qPrintable(error));

        auto fresh = openStore();
        QVERIFY(fresh);
        const qint64 id = importAutocompDir(*fresh, dir, &error);
        QVERIFY2(id, qPrintable(error));
        const RunInfo run = *fresh->run(id);
        QCOMPARE(run.target, u"cpu"_s);
        QCOMPARE(run.problem, u"gemm"_s);
        QCOMPARE(toString(run.state), toString(RunState::Finished));
        QVERIFY(run.label.startsWith(u"imported from Autocomp output "_s));
        QCOMPARE(run.configYaml, u"target: cpu\nproblem: gemm\n"_s);
        QCOMPARE(run.iteration, 2);
        QCOMPARE(run.baselineScore, 10.0);
        QCOMPARE(run.bestScore, 3.0);
        const QStringList violations = test::menuInsightViolations(*fresh);
        QVERIFY2(violations.isEmpty(), qPrintable(violations.join(u'\n')));

        const QList<Candidate> original = store->candidates(b.runId);
        const QList<Candidate> imported = fresh->candidates(id);
        QCOMPARE(imported.size(), original.size());
        QHash<qint64, Candidate> byId;
        for (const Candidate &c : imported)
            byId.insert(c.id, c);
        QHash<qint64, Candidate> origById;
        for (const Candidate &c : original)
            origById.insert(c.id, c);
        // Same candidates by code, with the same parent (by code), plan, status and score.
        for (const Candidate &o : original) {
            const auto it = std::find_if(imported.begin(), imported.end(),
                                         [&](const Candidate &c) { return c.code == o.code; });
            QVERIFY2(it != imported.end(), qPrintable(o.code));
            QCOMPARE(it->iteration, o.iteration);
            QCOMPARE(it->plan, o.plan);
            QCOMPARE(toString(it->status), toString(o.status));
            QCOMPARE(it->hasScore(), o.hasScore());
            if (o.hasScore())
                QCOMPARE(it->score, o.score);
            if (o.parentId)
                QCOMPARE(byId.value(it->parentId).code, origById.value(o.parentId).code);
            else
                QCOMPARE(it->parentId, 0);
            QCOMPARE(it->inBeam, o.inBeam);
            if (o.parentId) {
                QCOMPARE(it->planModel, u"gpt-5.2"_s);
                QVERIFY(it->planCallId);
                const auto calls = fresh->llmCallsForCandidate(it->id);
                QCOMPARE(calls.size(), 2); // its plan's call and its own code call
                QCOMPARE(calls.first().phase, u"plan"_s);
                QCOMPARE(calls.last().phase, o.origin == CandidateOrigin::Fix ? u"fix"_s : u"code"_s);
                QCOMPARE(toString(it->origin), toString(o.origin));
                if (o.fixOf)
                    QCOMPARE(byId.value(it->fixOf).code, origById.value(o.fixOf).code);
                QCOMPARE(calls.last().prompt, u"implement: "_s + o.plan);
            }
        }
        QCOMPARE(byId.value(run.bestCandidateId).code, u"void gemm() { /* tiled+simd */ }"_s);
        QCOMPARE(fresh->llmCalls(id).size(), 4 + 7);
        const auto c13 = std::find_if(imported.begin(), imported.end(),
                                      [](const Candidate &c) { return c.status == CandidateStatus::CompileError; });
        QCOMPARE(c13->error, u"error: expected ';'"_s);
        QCOMPARE(c13->code, u"void gemm() { x = 'a\\\\n'; }"_s);
    }

    // A directory as Autocomp itself writes it: quotes-only escaping in the reprs, no run_metadata.json,
    // the run's name in the directory name, _full responses and per-candidate result files.
    void importsRealAutocompLayout()
    {
        const QString dir = m_tmp.filePath(u"output/trn_trn-tutorial_1_beam_iters2_trn1.2xlarge_gpt-5.2_p2_c1_b2"_s);
        const QString root =
            u"CodeCandidate(parent=None,\nplan=None,\ncode='''def kernel():\n    return \\'a\\'\n''',\nscore=100.0,\n"
            u"translation_score=None,\nhw_feedback=[],\nplan_gen_model='None',\ncode_gen_model='None',\nstdout=None,\nstderr=None)"_s;
        writeFile(dir + u"/candidates-iter-0/candidate_0.txt"_s, root);
        writeFile(dir + u"/eval-results-iter-0/code_0_result.txt"_s, u"{\"correct\": true, \"latency\": 100.0}"_s);
        writeFile(dir + u"/generated-plans-iter-1/prompt_parent0_gpt-5.2_0.txt"_s, u"Optimize this."_s);
        writeFile(dir + u"/generated-plans-iter-1/plan_parent0_gpt-5.2_0.txt"_s, u"Plan A"_s);
        writeFile(dir + u"/generated-plans-iter-1/plan_parent0_gpt-5.2_0_full.txt"_s, u"</think>Plan A"_s);
        writeFile(dir + u"/generated-plans-iter-1/plan_parent0_gpt-5.2_1.txt"_s, u"Plan B"_s);
        writeFile(dir + u"/generated-code-iter-1/prompt_0_0_gpt-5.2.txt"_s, u"Implement A"_s);
        writeFile(dir + u"/generated-code-iter-1/impl_0_0_gpt-5.2_0.txt"_s, u"def kernel():\n    return 1\n"_s);
        writeFile(dir + u"/generated-code-iter-1/impl_0_0_gpt-5.2_0_full.txt"_s,
                  u"```python\ndef kernel():\n    return 1\n```"_s);
        writeFile(dir + u"/generated-code-iter-1/prompt_0_1_gpt-5.2.txt"_s, u"Implement B"_s);
        writeFile(dir + u"/generated-code-iter-1/impl_0_1_gpt-5.2_0.txt"_s, u"def kernel():\n    return 2\n"_s);
        writeFile(dir + u"/eval-results-iter-1/code_0_result.txt"_s,
                  u"{\n    \"correct\": true,\n    \"latency\": 40.5\n}"_s);
        writeFile(
            dir + u"/eval-results-iter-1/code_1_result.txt"_s,
            u"{\"correct\": false, \"latency\": null, \"stdout\": \"\", \"stderr\": \"AssertionError: mismatch\"}"_s);
        const QString a = u"CodeCandidate(parent="_s + root
            + u",\nplan='''Plan A''',\ncode='''def kernel():\n    return "
              u"1\n''',\nscore=40.5,\ntranslation_score=None,\n"
              u"hw_feedback=[],\nplan_gen_model='gpt-5.2',\ncode_gen_model='gpt-5.2',\nstdout=None,\nstderr=None)"_s;
        writeFile(dir + u"/candidates-iter-1/candidate_0.txt"_s, a);
        writeFile(dir + u"/candidates-iter-1/candidate_1.txt"_s, root);
        writeFile(dir + u"/metrics-iter-1.json"_s, u"{\"iteration\": 1, \"iteration_total_s\": 3.5}"_s);
        writeFile(
            dir + u"/run_metrics.json"_s,
            u"{\"run_total_s\": 3.5, \"iterations\": [], \"total_input_tokens\": 1234, \"total_output_tokens\": 56}"_s);
        writeFile(dir + u"/best_candidate_so_far.py"_s, u"def kernel():\n    return 1\n"_s);
        QVERIFY(isAutocompDir(dir));

        auto store = openStore();
        QVERIFY(store);
        QString error;
        const qint64 id = importAutocompDir(*store, dir, &error);
        QVERIFY2(id, qPrintable(error));
        const RunInfo run = *store->run(id);
        QCOMPARE(run.target, u"trn"_s);
        QCOMPARE(run.problem, u"trn-tutorial_1"_s);
        QCOMPARE(run.metric, u"latency"_s);
        QCOMPARE(run.iteration, 1);
        QCOMPARE(run.baselineScore, 100.0);
        QCOMPARE(run.bestScore, 40.5);
        QCOMPARE(run.tokensIn, 1234);
        const QStringList violations = test::menuInsightViolations(*store);
        QVERIFY2(violations.isEmpty(), qPrintable(violations.join(u'\n')));
        const QList<Candidate> cands = store->candidates(id);
        QCOMPARE(cands.size(), 3);
        const Candidate &r = cands[0];
        QCOMPARE(toString(r.origin), toString(CandidateOrigin::Root));
        QCOMPARE(r.code, u"def kernel():\n    return 'a'\n"_s);
        QVERIFY(r.inBeam);
        const Candidate &ca = cands[1];
        QCOMPARE(ca.parentId, r.id);
        QCOMPARE(ca.plan, u"Plan A"_s);
        QCOMPARE(toString(ca.status), toString(CandidateStatus::Correct));
        QCOMPARE(ca.score, 40.5);
        QVERIFY(ca.inBeam);
        QCOMPARE(run.bestCandidateId, ca.id);
        const Candidate &cb = cands[2];
        QCOMPARE(cb.plan, u"Plan B"_s);
        QCOMPARE(toString(cb.status), toString(CandidateStatus::Incorrect));
        QCOMPARE(cb.error, u"AssertionError: mismatch"_s);
        QVERIFY(!cb.inBeam);
        // Calls: two plans (the first with its full response), two implementations.
        const QList<LlmCall> calls = store->llmCalls(id);
        QCOMPARE(calls.size(), 4);
        QCOMPARE(calls[0].phase, u"plan"_s);
        QCOMPARE(calls[0].prompt, u"Optimize this."_s);
        QCOMPARE(calls[0].response, u"</think>Plan A"_s);
        QCOMPARE(ca.planCallId, calls[0].id);
        const auto codeCalls = store->llmCallsForCandidate(ca.id);
        QCOMPARE(codeCalls.size(), 2);
        QCOMPARE(codeCalls[1].prompt, u"Implement A"_s);
        QVERIFY(codeCalls[1].response.startsWith(u"```python"_s));
    }

    // The shipped example run (resources/example_run.jsonl): its menu insights add up, and the step of its
    // best path whose code is its parent's says it is a duplicate.
    void shippedExampleAddsUp()
    {
        auto store = openStore();
        QVERIFY(store);
        QString error;
        const qint64 id = importRunJsonl(
            *store, qEnvironmentVariable("AUTOCOMP_DATA_DIR") + u"/resources/example_run.jsonl"_s, &error);
        QVERIFY2(id, qPrintable(error));
        const QStringList violations = test::menuInsightViolations(*store);
        QVERIFY2(violations.isEmpty(), qPrintable(violations.join(u'\n')));
        const RunInfo run = *store->run(id);
        QHash<qint64, Candidate> byId;
        for (const Candidate &c : store->candidates(id))
            byId.insert(c.id, c);
        int flagged = 0;
        for (qint64 at = run.bestCandidateId; at > 0; at = byId.value(at).parentId) {
            const Candidate c = byId.value(at);
            if (c.parentId > 0 && c.code.simplified() == byId.value(c.parentId).code.simplified()) {
                // Of the earliest candidate with that code (the parent, or one before it).
                const qint64 original = c.metrics.value(u"duplicate_of"_s).toInteger();
                QVERIFY(original > 0 && original <= c.parentId);
                QCOMPARE(byId.value(original).code.simplified(), c.code.simplified());
                QVERIFY(c.flags.join(u' ').contains(u"duplicate of #%1"_s.arg(original)));
                ++flagged;
            }
        }
        QCOMPARE(flagged, 1);
    }

    void malformedResultLeavesNoRun()
    {
        auto store = openStore();
        QVERIFY(store);
        const Built b = buildRun(*store);
        const QString dir = m_tmp.filePath(u"export3"_s);
        QString error;
        QVERIFY2(exportAutocompDir(*store, b.runId, dir, &error), qPrintable(error));
        const QString bad = QDir(dir).filePath(u"eval-results-iter-2/code_1_result.txt"_s);
        QFile::remove(bad);
        writeFile(bad, u"{\"correct\": tru"_s);

        auto fresh = openStore();
        QVERIFY(fresh);
        QCOMPARE(importAutocompDir(*fresh, dir, &error), 0);
        QVERIFY2(error.contains(bad), qPrintable(error));
        QVERIFY(fresh->runs().isEmpty());
        QVERIFY(fresh->llmCalls(0).isEmpty());

        // A broken candidate repr names its file too; not a directory of ours at all is refused.
        const QString badRepr = QDir(dir).filePath(u"candidates-iter-1/candidate_0.txt"_s);
        QFile::remove(bad);
        writeFile(bad, u"{\"correct\": true, \"latency\": 1}"_s);
        QFile::remove(badRepr);
        writeFile(badRepr, u"CodeCandidate(parent=None, code='''x"_s);
        QCOMPARE(importAutocompDir(*fresh, dir, &error), 0);
        QVERIFY2(error.contains(badRepr), qPrintable(error));
        QVERIFY(fresh->runs().isEmpty());
        QCOMPARE(importAutocompDir(*fresh, m_tmp.filePath(u"nothing-here"_s), &error), 0);
        QVERIFY(error.contains(u"nothing-here"_s));
    }
};

QTEST_GUILESS_MAIN(TestAutocompDir)
#include "tst_autocomp_dir.moc"
