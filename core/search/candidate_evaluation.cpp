// The beam algorithm's verdicts: evaluating a candidate, recording the outcome, duplicates and the run's best.
#include "search/search_engine.h"

#include "eval/evaluator.h"
#include "model/code_identity.h"
#include "store/run_store.h"

#include <QCryptographicHash>
#include <QJsonObject>

#include <algorithm>

namespace autocomp {

namespace {

CandidateStatus statusFromResult(const EvalResult &result)
{
    if (result.correct)
        return CandidateStatus::Correct;
    if (result.status == QLatin1String("compile_error"))
        return CandidateStatus::CompileError;
    if (result.status == QLatin1String("incorrect"))
        return CandidateStatus::Incorrect;
    if (result.status == QLatin1String("no_hardware"))
        return CandidateStatus::NoHardware;
    return CandidateStatus::Failed;
}

} // namespace

bool SearchEngine::fixable(CandidateStatus status)
{
    return status == CandidateStatus::CompileError || status == CandidateStatus::Incorrect;
}

void SearchEngine::evaluate(qint64 candidateId)
{
    // Where the target times a baseline beside the candidate, every candidate is timed alternately
    // with the starting code in the same window: the ratio of the two, not the absolute time, ranks
    // candidates (see evaluationFinished), so a slow phase of the machine moves both sides.
    if (!m_lifecycle.acting() || candidateId <= 0)
        return;
    const Candidate &candidate = m_candidates[candidateId];
    if (const qint64 original = duplicateOf(candidate)) {
        inBatch([&] { markDuplicate(candidateId, original); });
        return;
    }
    QString baseline;
    if (candidate.origin != CandidateOrigin::Root
        && std::any_of(m_setup.target.steps.cbegin(), m_setup.target.steps.cend(),
                       [](const TargetStep &s) { return !s.baselineWorker.isEmpty(); }))
        baseline = m_setup.problem.startCode();
    // The store, run and candidate name the evaluation: a remote executor finds a job that a killed
    // process left running (or its result) by this key instead of evaluating the candidate again.
    EvalRequest request;
    request.key = QStringLiteral("%1-r%2-c%3")
                      .arg(QString::fromLatin1(
                          QCryptographicHash::hash(m_store->path().toUtf8(), QCryptographicHash::Sha1).toHex().left(8)))
                      .arg(m_run.id)
                      .arg(candidateId);
    EvalJob *job = m_evaluator->evaluate(m_setup.target, m_setup.problem, candidate.code, baseline,
                                         &m_setup.config.evaluation, request);
    m_jobs << job;
    m_evaluating.insert(candidateId);
    connect(job, &EvalJob::statusChanged, this, [this, candidateId](CandidateStatus status) {
        auto it = m_candidates.find(candidateId);
        if (it == m_candidates.end() || it->status == status || m_lifecycle.ended())
            return;
        // Compiling, testing, benchmarking: shown live, not stored. The store keeps the outcome, written
        // when the evaluation ends; an evaluation cut short by a crash is redone on resume anyway.
        it->status = status;
        Q_EMIT candidateUpdated(*it);
    });
    // Long steps say what they are doing (a 20-30 s extension build, or its reuse from the cache).
    connect(job, &EvalJob::stepStarted, this, [this, candidateId](const QString &step, const QString &note) {
        if (!note.isEmpty() && !m_lifecycle.ended())
            log(QStringLiteral("candidate %1: %2: %3").arg(candidateId).arg(step, note));
    });
    connect(job, &EvalJob::finished, this, [this, candidateId, job](const EvalResult &result) {
        m_jobs.removeAll(job);
        m_evaluating.remove(candidateId);
        // Cancelled by stop() or a store failure: not a verdict; the candidate is evaluated again on resume.
        if (!m_lifecycle.acting())
            return;
        // The evaluation, the candidate's outcome and whatever they start (beam selection, fix requests): one commit.
        inBatch([&] { evaluationFinished(candidateId, result); });
    });
}

void SearchEngine::evaluationFinished(qint64 candidateId, const EvalResult &result)
{
    Candidate c = m_candidates.value(candidateId);
    c.status = statusFromResult(result);
    c.metrics = result.metrics;
    c.feedback = result.feedback;
    c.flags = result.flags;
    c.score = result.correct ? result.metricValue(m_setup.target.metric) : std::numeric_limits<double>::quiet_NaN();
    // Paired timing: the score is the starting code's latency times this candidate's ratio to it, as
    // measured side by side; units and scale stay the root's, the noise is the ratio's.
    const double ratio =
        result.metrics.value(QStringLiteral("paired_ratio")).toObject().value(QStringLiteral("value")).toDouble();
    if (result.correct && ratio > 0 && m_run.baselineScore > 0 && c.origin != CandidateOrigin::Root)
        c.score = m_run.baselineScore * ratio;
    c.error = result.correct ? QString() : QStringLiteral("%1: %2").arg(result.status, result.log.trimmed());
    // The run-to-run noise of a timed metric, recorded with the candidate so that every view and every
    // ranking widens its interval alike (scoreInterval).
    const double floor = m_setup.config.search.noiseFloor.value_or(m_setup.target.noiseFloor);
    if (result.correct && floor > 0 && c.hasScore())
        c.metrics.insert(QStringLiteral("noise_floor"), floor);
    if (!m_store->addEvaluation(candidateId, result)) {
        storeFailed(QStringLiteral("recording an evaluation"));
        return;
    }
    updateCandidate(c);
    if (!m_lifecycle.live())
        return;

    if (c.origin == CandidateOrigin::Root) {
        rootEvaluated(c);
        return;
    }
    if (c.status == CandidateStatus::Correct) {
        log(QStringLiteral("candidate %1 (iteration %2, parent %3): correct, %4 %5 (%6x over the start)")
                .arg(c.id)
                .arg(c.iteration)
                .arg(c.parentId)
                .arg(c.score, 0, 'g', 4)
                .arg(m_setup.target.metricUnit)
                .arg(m_run.baselineScore / c.score, 0, 'f', 2));
        updateBest();
        if (inTranslation() && m_setup.config.search.translateScore
            && !c.metrics.contains(QStringLiteral("translation_score"))) {
            startWork([this, candidateId] { requestTranslationScore(candidateId); });
            return; // the score request carries this candidate's outstanding count
        }
    } else {
        log(QStringLiteral("candidate %1 (iteration %2): %3").arg(c.id).arg(c.iteration).arg(toString(c.status)));
        if (fixable(c.status) && m_fixAttempts.value(c.id) < m_setup.config.search.fixAttempts
            && m_lifecycle.phase() != RunLifecycle::Phase::Draining) {
            ++m_outstanding;
            startWork([this, candidateId] { requestFix(candidateId); });
        }
    }
    workDone();
}

qint64 SearchEngine::duplicateOf(const Candidate &c) const
{
    if (c.origin == CandidateOrigin::Root || c.code.isEmpty())
        return 0;
    auto keyOf = [&](const Candidate &o) -> const QString & {
        auto it = m_codeKeys.find(o.id);
        if (it == m_codeKeys.end())
            it = m_codeKeys.insert(o.id, normalizedCode(o.code));
        return *it;
    };
    const QString key = normalizedCode(c.code);
    qint64 original = 0;
    for (const Candidate &o : std::as_const(m_candidates)) {
        if (o.id == c.id || o.code.isEmpty() || o.status == CandidateStatus::Duplicate || (original && o.id > original))
            continue;
        // Evaluated, or being evaluated: a candidate still waiting (or cancelled, to be redone) is no original yet.
        if (!isFinal(o.status) && !m_evaluating.contains(o.id))
            continue;
        if (keyOf(o) == key)
            original = o.id;
    }
    return original;
}

void SearchEngine::markDuplicate(qint64 candidateId, qint64 originalId)
{
    Candidate c = m_candidates.value(candidateId);
    const Candidate original = m_candidates.value(originalId);
    c.status = CandidateStatus::Duplicate;
    c.metrics = {{QStringLiteral("duplicate_of"), originalId}};
    c.error = QStringLiteral("duplicate of #%1: its code is the same, whitespace aside (#%1: %2); not evaluated again")
                  .arg(originalId)
                  .arg(isFinal(original.status) ? statusWord(original) : QStringLiteral("being evaluated"));
    updateCandidate(c);
    log(QStringLiteral("candidate %1 (iteration %2): duplicate of #%3, not evaluated")
            .arg(c.id)
            .arg(c.iteration)
            .arg(originalId));
    workDone();
}

bool SearchEngine::clearlyBetter(const Candidate &c, const Candidate &incumbent, double slack)
{
    const auto ic = scoreInterval(c);
    const auto ii = scoreInterval(incumbent);
    if (!ic || !ii)
        return c.score < incumbent.score * slack;
    // Zero-width intervals (a deterministic metric) reduce this to the plain comparison.
    return ic->high < ii->low * slack;
}

void SearchEngine::updateBest()
{
    QList<qint64> ids = m_candidates.keys();
    std::sort(ids.begin(), ids.end());
    const Candidate *best = nullptr;
    for (qint64 id : std::as_const(ids)) {
        const Candidate &c = m_candidates[id];
        if (c.status != CandidateStatus::Correct || !c.hasScore())
            continue;
        if (!best || clearlyBetter(c, *best))
            best = &c;
    }
    if (!best || (best->id == m_run.bestCandidateId && best->score == m_run.bestScore))
        return;
    m_run.bestScore = best->score;
    m_run.bestCandidateId = best->id;
    persistRun();
}

QString SearchEngine::startFailure(const Candidate &root)
{
    // An evaluation `error` is the machine's (a setup step, the sandbox, a loader, an absent tool): no
    // verdict about the starting code, and the whole log is kept, lines and all.
    if (isMachineFault(root))
        return QStringLiteral(
                   "the starting code could not be evaluated on this machine; this is a problem of the machine, "
                   "not of the code:\n%1")
            .arg(root.error.mid(int(qstrlen("error: "))).left(20000));
    return QStringLiteral("the starting code does not pass its own harness (%1): %2")
        .arg(toString(root.status), root.error.left(2000));
}

bool SearchEngine::unmeasuredRun(const Candidate &root) const
{
    // With evaluation.compile_only the steps that need the hardware are left out: the start passing
    // everything else (compiling; on tpu, correctness in Pallas' interpreter) ends with no_hardware. The
    // search still plans, writes, checks and fixes candidates; with no score none of them is ranked.
    return m_setup.config.evaluation.compileOnly && root.status == CandidateStatus::NoHardware;
}

void SearchEngine::rootEvaluated(const Candidate &root)
{
    --m_outstanding;
    if (!unmeasuredRun(root) && (root.status != CandidateStatus::Correct || !root.hasScore())) {
        finish(RunState::Failed, startFailure(root));
        return;
    }
    m_run.bestCandidateId = root.id;
    if (root.hasScore()) {
        m_run.baselineScore = root.score;
        m_run.bestScore = root.score;
        log(QStringLiteral("starting code: %1 %2").arg(root.score, 0, 'g', 4).arg(m_setup.target.metricUnit));
    } else {
        log(QStringLiteral(
            "starting code: passes every step that runs without the hardware, not measured "
            "(evaluation.compile_only): candidates are checked, none is ranked, the beam stays the start"));
    }
    persistRun();
    m_beam = {root.id};
    Candidate r = root;
    r.inBeam = true;
    updateCandidate(r);
    if (!m_store->setBeam(m_run.id, m_beam)) {
        storeFailed(QStringLiteral("recording the beam"));
        return;
    }
    Q_EMIT beamChanged(m_beam);
    m_bestBeforeIteration = m_run.bestScore;
    startIteration(1, false);
}

} // namespace autocomp
