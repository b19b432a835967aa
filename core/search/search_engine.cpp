#include "search/search_engine.h"

#include "agents/prompt_builder.h"
#include "agents/response_parser.h"
#include "eval/evaluator.h"
#include "store/run_store.h"

#include <QCryptographicHash>
#include <QLoggingCategory>
#include <QRegularExpression>
#include <QSet>

#include <algorithm>

Q_LOGGING_CATEGORY(lcSearch, "autocomp.search")

namespace autocomp {

namespace {

QString normalizedCode(const QString &code)
{
    QString out;
    out.reserve(code.size());
    for (QChar c : code)
        if (!c.isSpace())
            out += c;
    return out;
}

CandidateStatus statusFromResult(const EvalResult &result)
{
    if (result.correct)
        return CandidateStatus::Correct;
    if (result.status == QLatin1String("compile_error"))
        return CandidateStatus::CompileError;
    if (result.status == QLatin1String("incorrect"))
        return CandidateStatus::Incorrect;
    return CandidateStatus::Failed;
}

} // namespace

SearchEngine::SearchEngine(RunSetup setup, QObject *parent) : QObject(parent), m_setup(std::move(setup)), m_llm(new LlmClient(this)) {}

SearchEngine::~SearchEngine() = default;

void SearchEngine::log(const QString &message)
{
    qCInfo(lcSearch).noquote() << message;
    Q_EMIT logMessage(message);
}

std::mt19937_64 SearchEngine::rngFor(quint64 a, quint64 b, quint64 c) const
{
    // One generator per request, derived from the seed and the request's position: draws do not depend
    // on the order in which responses arrive, so the same seed and responses give the same run.
    std::seed_seq seq{quint32(m_setup.config.search.seed), quint32(m_setup.config.search.seed >> 32), quint32(a), quint32(b), quint32(c)};
    return std::mt19937_64(seq);
}

QList<int> SearchEngine::dropoutDraw(int menuSize, double dropout, std::mt19937_64 &rng)
{
    QList<int> kept;
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    for (int i = 0; i < menuSize; ++i)
        if (uniform(rng) >= dropout)
            kept << i;
    if (kept.isEmpty() && menuSize > 0)
        kept << int(std::uniform_int_distribution<int>(0, menuSize - 1)(rng));
    return kept;
}

bool SearchEngine::start(QString *error)
{
    m_store = RunStore::open(m_setup.storePath, error);
    if (!m_store)
        return false;
    m_evaluator = new Evaluator(m_setup.config.evaluation, this);
    if (!m_evaluator->configurationError().isEmpty()) {
        *error = m_evaluator->configurationError();
        return false;
    }
    m_clock.start();
    m_run.target = m_setup.target.name;
    m_run.problem = m_setup.problem.name;
    m_run.agent = m_setup.agent.name;
    m_run.configYaml = QString::fromUtf8(m_setup.configYaml);
    m_run.state = RunState::Running;
    m_run.metric = m_setup.target.metric;
    m_run.label = m_setup.label;
    m_run.createdAt = QDateTime::currentDateTimeUtc();
    m_run.id = m_store->createRun(m_run);
    if (!m_run.id) {
        *error = QStringLiteral("%1: cannot record the run: %2").arg(m_store->path(), m_store->lastError());
        return false;
    }
    if (!m_evaluator->sandboxNote().isEmpty())
        log(m_evaluator->sandboxNote());
    Q_EMIT runStateChanged(RunState::Running, {});

    Candidate root;
    root.runId = m_run.id;
    root.iteration = 0;
    root.origin = CandidateOrigin::Root;
    root.status = CandidateStatus::Pending;
    root.code = m_setup.problem.startCode();
    if (root.code.isEmpty()) {
        *error = QStringLiteral("%1: the starting code is empty or unreadable").arg(m_setup.problem.startFile);
        finish(RunState::Failed, *error);
        return false;
    }
    const qint64 rootId = addCandidate(root);
    log(QStringLiteral("run %1: %2/%3, evaluating the starting code").arg(m_run.id).arg(m_run.target, m_run.problem));
    ++m_outstanding;
    evaluate(rootId);
    return true;
}

qint64 SearchEngine::addCandidate(Candidate candidate)
{
    candidate.runId = m_run.id;
    candidate.id = m_store->addCandidate(candidate);
    if (!candidate.id) {
        // A store failure must not lose the candidate silently: keep it in memory with a negative id.
        static qint64 s_local = 0;
        candidate.id = --s_local;
        log(QStringLiteral("store error while adding a candidate: %1").arg(m_store->lastError()));
    }
    m_candidates.insert(candidate.id, candidate);
    Q_EMIT candidateAdded(candidate);
    return candidate.id;
}

void SearchEngine::updateCandidate(const Candidate &candidate)
{
    m_candidates.insert(candidate.id, candidate);
    if (candidate.id > 0 && !m_store->updateCandidate(candidate))
        log(QStringLiteral("store error while updating candidate %1: %2").arg(candidate.id).arg(m_store->lastError()));
    Q_EMIT candidateUpdated(candidate);
}

void SearchEngine::persistRun()
{
    if (!m_store->updateRun(m_run))
        log(QStringLiteral("store error while updating the run: %1").arg(m_store->lastError()));
}

QString SearchEngine::budgetExceeded() const
{
    const BudgetConfig &b = m_setup.config.budget;
    if (b.maxLlmCalls && m_run.llmCalls >= *b.maxLlmCalls)
        return QStringLiteral("budget: %1 LLM calls reached (max_llm_calls)").arg(m_run.llmCalls);
    if (b.maxUsd && m_run.usd >= *b.maxUsd)
        return QStringLiteral("budget: $%1 spent (max_usd %2)").arg(m_run.usd, 0, 'f', 2).arg(*b.maxUsd);
    if (b.maxHours && m_clock.elapsed() >= *b.maxHours * 3600e3)
        return QStringLiteral("budget: %1 h of wall time (max_hours)").arg(*b.maxHours);
    return {};
}

void SearchEngine::sendLlm(const QString &phase, const ModelSpec &spec, const QString &prompt, int sampleIndex, qint64 candidateId,
                           LlmCallback callback)
{
    LlmRequest request;
    request.spec = spec;
    request.system = PromptBuilder::systemPrompt(m_setup.target);
    request.prompt = prompt;
    request.sampleIndex = sampleIndex;
    const QString hash = request.hash();

    auto record = [this, phase, request, hash, candidateId](const LlmResponse &response) -> qint64 {
        LlmCall call;
        call.runId = m_run.id;
        call.candidateId = candidateId;
        call.phase = phase;
        call.requestHash = hash;
        call.provider = request.spec.provider;
        call.model = request.spec.model;
        call.prompt = request.prompt;
        call.response = response.text;
        call.reasoning = response.reasoning;
        call.tokensIn = response.tokensIn;
        call.tokensOut = response.tokensOut;
        call.latencyMs = response.latencyMs;
        call.retries = response.retries;
        call.status = response.ok ? QStringLiteral("ok") : QStringLiteral("error");
        call.error = response.error;
        if (response.fromCache)
            call.status = QStringLiteral("cached");
        const qint64 id = m_store->addLlmCall(call);
        if (!response.fromCache) {
            ++m_run.llmCalls;
            m_run.tokensIn += response.tokensIn;
            m_run.tokensOut += response.tokensOut;
        }
        persistRun();
        Q_EMIT usageChanged(m_run.tokensIn, m_run.tokensOut, m_run.usd, m_run.llmCalls);
        return id;
    };

    // A response already paid for (same provider, model, prompt, parameters and sample) is reused.
    if (auto cached = m_store->cachedResponse(hash)) {
        LlmResponse response;
        response.ok = true;
        response.fromCache = true;
        response.text = cached->response;
        response.reasoning = cached->reasoning;
        response.tokensIn = cached->tokensIn;
        response.tokensOut = cached->tokensOut;
        QMetaObject::invokeMethod(
            this,
            [this, response, record, callback] {
                if (m_done)
                    return;
                callback(response, record(response));
            },
            Qt::QueuedConnection);
        return;
    }
    LlmReply *reply = m_llm->send(request);
    m_replies << reply;
    connect(reply, &LlmReply::finished, this, [this, reply, record, callback] {
        reply->deleteLater();
        m_replies.removeAll(reply);
        if (m_done)
            return;
        const LlmResponse response = reply->response();
        callback(response, record(response));
    });
}

void SearchEngine::evaluate(qint64 candidateId)
{
    EvalJob *job = m_evaluator->evaluate(m_setup.target, m_setup.problem, m_candidates.value(candidateId).code);
    m_jobs << job;
    connect(job, &EvalJob::statusChanged, this, [this, candidateId](CandidateStatus status) {
        Candidate c = m_candidates.value(candidateId);
        if (c.status == status)
            return;
        c.status = status;
        updateCandidate(c);
    });
    connect(job, &EvalJob::finished, this, [this, candidateId, job](const EvalResult &result) {
        m_jobs.removeAll(job);
        if (m_done)
            return;
        evaluationFinished(candidateId, result);
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
    c.error = result.correct ? QString() : QStringLiteral("%1: %2").arg(result.status, result.log.trimmed());
    if (candidateId > 0 && !m_store->addEvaluation(candidateId, result))
        log(QStringLiteral("store error while recording an evaluation: %1").arg(m_store->lastError()));
    updateCandidate(c);

    if (c.origin == CandidateOrigin::Root) {
        rootEvaluated(c);
        return;
    }
    const Candidate parent = m_candidates.value(c.parentId);
    if (c.status == CandidateStatus::Correct) {
        const double speedup = m_run.baselineScore / c.score;
        log(QStringLiteral("candidate %1 (iteration %2, parent %3): correct, %4 %5 (%6x over the start)")
                .arg(c.id)
                .arg(c.iteration)
                .arg(c.parentId)
                .arg(c.score, 0, 'g', 4)
                .arg(m_setup.target.metricUnit)
                .arg(speedup, 0, 'f', 2));
        if (m_run.bestScore <= 0 || c.score < m_run.bestScore) {
            m_run.bestScore = c.score;
            m_run.bestCandidateId = c.id;
            persistRun();
        }
    } else {
        log(QStringLiteral("candidate %1 (iteration %2): %3").arg(c.id).arg(c.iteration).arg(toString(c.status)));
        if ((c.status == CandidateStatus::CompileError || c.status == CandidateStatus::Incorrect)
            && m_fixAttempts.value(c.id) < m_setup.config.search.fixAttempts && !m_draining) {
            requestFix(c.id);
        }
    }
    workDone();
}

void SearchEngine::rootEvaluated(const Candidate &root)
{
    --m_outstanding;
    if (root.status != CandidateStatus::Correct || !root.hasScore()) {
        finish(RunState::Failed, QStringLiteral("the starting code does not pass its own harness (%1): %2")
                                     .arg(toString(root.status), root.error.left(2000)));
        return;
    }
    m_run.baselineScore = root.score;
    m_run.bestScore = root.score;
    m_run.bestCandidateId = root.id;
    persistRun();
    log(QStringLiteral("starting code: %1 %2").arg(root.score, 0, 'g', 4).arg(m_setup.target.metricUnit));
    m_beam = {root.id};
    Candidate r = root;
    r.inBeam = true;
    updateCandidate(r);
    m_store->setBeam(m_run.id, m_beam);
    Q_EMIT beamChanged(m_beam);
    startIteration(1);
}

void SearchEngine::startIteration(int iteration)
{
    m_iteration = iteration;
    m_iterationCandidates.clear();
    m_fixCounter = 0;
    const QString reason = budgetExceeded();
    if (!reason.isEmpty()) {
        finish(RunState::Stopped, reason);
        return;
    }
    log(QStringLiteral("iteration %1 of %2: beam %3").arg(iteration).arg(m_setup.config.search.iterations).arg(m_beam.size()));
    const int n = m_setup.config.search.plansPerParent;
    int slot = 0;
    // Count everything first, so an early cached answer cannot finish the iteration while plans are still being issued.
    m_outstanding += int(m_beam.size()) * n;
    for (int p = 0; p < m_beam.size(); ++p)
        for (int i = 0; i < n; ++i)
            requestPlan(m_beam.at(p), p, i, slot++);
}

void SearchEngine::requestPlan(qint64 parentId, int parentIndex, int planIndex, int planSlot)
{
    if (m_draining) {
        workDone();
        return;
    }
    const SearchConfig &s = m_setup.config.search;
    std::mt19937_64 rng = rngFor(quint64(m_iteration), quint64(parentIndex), quint64(planIndex));
    const QList<int> kept = dropoutDraw(int(m_setup.agent.menu.size()), s.menuDropout, rng);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    const bool newIdea = uniform(rng) < s.newIdeaProbability;
    QList<CodeExample> examples;
    for (const CodeExample &e : m_setup.agent.codeExamples)
        if (uniform(rng) < 0.25)
            examples << e;

    PlanPromptInput in;
    in.agent = &m_setup.agent;
    in.problem = &m_setup.problem;
    in.target = &m_setup.target;
    const Candidate parent = m_candidates.value(parentId);
    in.parent = &parent;
    QStringList shown;
    for (int index : kept) {
        in.menu << MenuEntry{index + 1, m_setup.agent.menu.at(index)};
        shown << m_setup.agent.menu.at(index);
    }
    in.examples = examples;
    in.inviteNewIdea = newIdea;
    in.iteration = m_iteration;
    in.iterations = s.iterations;
    const QString prompt = PromptBuilder::planPrompt(in);
    const ModelSpec &model = m_setup.planModels.at(planSlot % m_setup.planModels.size());
    sendLlm(QStringLiteral("plan"), model, prompt, planIndex, 0,
            [this, parentId, planSlot, model, shown](const LlmResponse &response, qint64 callId) {
                planArrived(parentId, planSlot, model.text, shown, response, callId);
            });
}

void SearchEngine::planArrived(qint64 parentId, int planSlot, const QString &model, const QStringList &menuShown,
                               const LlmResponse &response, qint64 callId)
{
    Q_UNUSED(menuShown);
    const Candidate parent = m_candidates.value(parentId);
    Candidate c;
    c.parentId = parentId;
    c.iteration = m_iteration;
    c.origin = CandidateOrigin::Llm;
    c.planModel = model;
    c.planCallId = callId;
    if (!response.ok) {
        c.status = CandidateStatus::Failed;
        c.error = QStringLiteral("plan request failed: %1").arg(response.error);
        m_iterationCandidates << addCandidate(c);
        log(QStringLiteral("plan request to %1 failed: %2").arg(model, response.error));
        workDone();
        return;
    }
    const ResponseParser::MenuChoice choice = ResponseParser::parseMenuChoice(response.text, m_setup.agent.menu);
    c.plan = response.text;
    c.menuItem = choice.isNew ? QStringLiteral("new: ") + choice.text : choice.text;
    c.status = CandidateStatus::Coding;
    const int k = m_setup.config.search.codePerPlan;
    m_outstanding += k;
    for (int i = 0; i < k; ++i) {
        const qint64 id = addCandidate(c);
        m_iterationCandidates << id;
        m_codeSlot.insert(id, planSlot * k + i);
        requestCode(id, planSlot * k + i);
    }
    workDone(); // the plan itself
}

void SearchEngine::requestCode(qint64 candidateId, int codeSlot)
{
    if (m_draining) {
        Candidate c = m_candidates.value(candidateId);
        c.status = CandidateStatus::Failed;
        c.error = QStringLiteral("not started: %1").arg(m_drainReason);
        updateCandidate(c);
        workDone();
        return;
    }
    Candidate c = m_candidates.value(candidateId);
    const Candidate parent = m_candidates.value(c.parentId);
    const ModelSpec &model = m_setup.codeModels.at(codeSlot % m_setup.codeModels.size());
    c.codeModel = model.text;
    updateCandidate(c);
    const QString prompt = PromptBuilder::codePrompt(m_setup.agent, m_setup.problem, m_setup.target, parent.code, c.plan);
    sendLlm(QStringLiteral("code"), model, prompt, codeSlot % m_setup.config.search.codePerPlan, candidateId,
            [this, candidateId](const LlmResponse &response, qint64) { codeArrived(candidateId, response, false); });
}

void SearchEngine::codeArrived(qint64 candidateId, const LlmResponse &response, bool fix)
{
    Candidate c = m_candidates.value(candidateId);
    if (!response.ok) {
        c.status = CandidateStatus::Failed;
        c.error = QStringLiteral("%1 request failed: %2").arg(fix ? QStringLiteral("fix") : QStringLiteral("code"), response.error);
        updateCandidate(c);
        workDone();
        return;
    }
    const auto code = ResponseParser::extractCode(response.text, m_setup.target.language);
    if (!code || code->trimmed().isEmpty()) {
        c.status = CandidateStatus::Failed;
        c.error = QStringLiteral("the response contains no complete ```%1 code block").arg(m_setup.target.language);
        updateCandidate(c);
        workDone();
        return;
    }
    c.code = *code;
    c.status = CandidateStatus::Pending;
    updateCandidate(c);
    evaluate(candidateId); // its outstanding count carries over to the evaluation
}

void SearchEngine::requestFix(qint64 failedId)
{
    const Candidate failed = m_candidates.value(failedId);
    Candidate c;
    c.parentId = failed.parentId;
    c.iteration = failed.iteration;
    c.origin = CandidateOrigin::Fix;
    c.plan = failed.plan;
    c.menuItem = failed.menuItem;
    c.planModel = failed.planModel;
    c.planCallId = failed.planCallId;
    c.status = CandidateStatus::Coding;
    // Fixes rotate across the code models, starting after the model that wrote the failed code.
    const int slot = m_codeSlot.value(failedId) + 1 + m_fixCounter++;
    const ModelSpec &model = m_setup.codeModels.at(slot % m_setup.codeModels.size());
    c.codeModel = model.text;
    const qint64 id = addCandidate(c);
    m_iterationCandidates << id;
    m_codeSlot.insert(id, slot);
    m_fixAttempts.insert(id, m_fixAttempts.value(failedId) + 1);
    ++m_outstanding;
    QString errorLog;
    for (const StepResult &s : m_store->evaluationSteps(failedId))
        if (s.exitCode != 0 || s.timedOut || s.crashed)
            errorLog += QStringLiteral("[%1]\n%2\n").arg(s.name, s.log);
    if (errorLog.isEmpty())
        errorLog = failed.error;
    const QString prompt = PromptBuilder::fixPrompt(m_setup.agent, m_setup.problem, m_setup.target, failed.code, failed.plan, errorLog);
    log(QStringLiteral("candidate %1 failed; asking %2 for a fix (candidate %3)").arg(failedId).arg(model.text).arg(id));
    sendLlm(QStringLiteral("fix"), model, prompt, m_fixAttempts.value(id), id,
            [this, id](const LlmResponse &response, qint64) { codeArrived(id, response, true); });
}

void SearchEngine::workDone()
{
    --m_outstanding;
    if (m_outstanding > 0 || m_done)
        return;
    if (!m_draining) {
        const QString reason = budgetExceeded();
        if (!reason.isEmpty()) {
            m_draining = true;
            m_drainReason = reason;
        }
    }
    selectBeam();
}

void SearchEngine::selectBeam()
{
    const SearchConfig &s = m_setup.config.search;
    const double slack = s.slackFor(m_iteration);
    QList<Candidate> pool;
    for (qint64 id : std::as_const(m_beam))
        pool << m_candidates.value(id);
    for (qint64 id : std::as_const(m_iterationCandidates)) {
        const Candidate c = m_candidates.value(id);
        if (c.status != CandidateStatus::Correct || !c.hasScore())
            continue;
        const Candidate parent = m_candidates.value(c.parentId);
        if (parent.hasScore() && !(c.score < parent.score * slack))
            continue; // not fast enough against its parent
        pool << c;
    }
    std::stable_sort(pool.begin(), pool.end(), [](const Candidate &a, const Candidate &b) {
        return a.score < b.score || (a.score == b.score && a.id < b.id);
    });
    QList<qint64> beam;
    QSet<QString> codes;
    QSet<QString> parentPlans;
    for (const Candidate &c : std::as_const(pool)) {
        if (beam.size() >= s.beamWidth)
            break;
        const QString code = normalizedCode(c.code);
        const QString parentPlan = c.origin == CandidateOrigin::Root ? QString() : QString::number(c.parentId) + QLatin1Char('\x1f') + c.plan;
        if (codes.contains(code) || (!parentPlan.isEmpty() && parentPlans.contains(parentPlan)))
            continue;
        codes.insert(code);
        if (!parentPlan.isEmpty())
            parentPlans.insert(parentPlan);
        beam << c.id;
    }
    if (beam.isEmpty())
        beam = m_beam; // never empty
    for (qint64 id : std::as_const(m_beam)) {
        if (!beam.contains(id)) {
            Candidate c = m_candidates.value(id);
            c.inBeam = false;
            m_candidates.insert(id, c);
        }
    }
    for (qint64 id : std::as_const(beam)) {
        Candidate c = m_candidates.value(id);
        c.inBeam = true;
        m_candidates.insert(id, c);
    }
    m_beam = beam;
    m_store->setBeam(m_run.id, m_beam);
    Q_EMIT beamChanged(m_beam);
    m_run.iteration = m_iteration;
    persistRun();
    QStringList scores;
    for (qint64 id : std::as_const(m_beam))
        scores << QStringLiteral("#%1 %2").arg(id).arg(m_candidates.value(id).score, 0, 'g', 4);
    log(QStringLiteral("iteration %1 done: beam %2").arg(m_iteration).arg(scores.join(QLatin1String(", "))));
    Q_EMIT iterationFinished(m_iteration);
    if (m_draining) {
        finish(RunState::Stopped, m_drainReason);
        return;
    }
    if (m_iteration >= s.iterations) {
        finish(RunState::Finished, QStringLiteral("completed %1 iterations").arg(s.iterations));
        return;
    }
    startIteration(m_iteration + 1);
}

void SearchEngine::stop(const QString &reason)
{
    if (m_done)
        return;
    for (const QPointer<LlmReply> &reply : std::as_const(m_replies))
        if (reply)
            reply->abort();
    if (m_evaluator)
        m_evaluator->cancelAll();
    finish(RunState::Stopped, reason);
}

void SearchEngine::finish(RunState state, const QString &reason)
{
    if (m_done)
        return;
    m_done = true;
    m_run.state = state;
    m_run.stopReason = reason;
    // Candidates that never reached a verdict are marked, so the store never shows them as in progress.
    for (auto it = m_candidates.begin(); it != m_candidates.end(); ++it) {
        if (!isFinal(it->status)) {
            Candidate c = *it;
            c.status = CandidateStatus::Failed;
            c.error = QStringLiteral("not finished: %1").arg(reason);
            if (c.id > 0)
                m_store->updateCandidate(c);
            *it = c;
            Q_EMIT candidateUpdated(c);
        }
    }
    if (m_store)
        persistRun();
    log(QStringLiteral("run %1 %2: %3").arg(m_run.id).arg(toString(state), reason));
    Q_EMIT runStateChanged(state, reason);
    Q_EMIT finished(m_run);
}

} // namespace autocomp
