#include "search/search_engine.h"

#include "agents/edit_applier.h"
#include "agents/prompt_builder.h"
#include "agents/response_parser.h"
#include "eval/evaluator.h"
#include "model/code_identity.h"
#include "search/example_selection.h"
#include "store/run_store.h"

#include <QLoggingCategory>
#include <QRegularExpression>
#include <QSet>

#include <algorithm>

Q_LOGGING_CATEGORY(lcSearch, "autocomp.search", QtInfoMsg)

namespace autocomp {

SearchEngine::SearchEngine(RunSetup setup, QObject *parent) : SearchEngine(std::move(setup), nullptr, parent) {}

SearchEngine::SearchEngine(RunSetup setup, LlmClient *sharedClient, QObject *parent)
    : SearchEngine(std::move(setup), sharedClient, nullptr, parent)
{}

SearchEngine::SearchEngine(RunSetup setup, LlmClient *sharedClient, Evaluator *sharedEvaluator, QObject *parent)
    : QObject(parent)
    , m_setup(std::move(setup))
    , m_llm(sharedClient ? sharedClient : new LlmClient(this))
    , m_sharedEvaluator(sharedEvaluator)
{}

SearchEngine::~SearchEngine()
{
    // A run left paused (or running) when its process ends has no driver from now on: the lease says so at
    // once, so a workbench following the store can offer to drive it.
    if (m_store && m_run.id && m_lifecycle.live())
        m_store->releaseLease(m_run.id);
    // A shared client outlives this engine: its requests for this run are cancelled and their replies,
    // whose handlers die with this object, are deleted when they finish.
    if (m_llm->parent() != this && m_ledger)
        m_ledger->abandon();
}

void SearchEngine::log(const QString &message)
{
    qCDebug(lcSearch).noquote() << message;
    Q_EMIT logMessage(message);
}

std::mt19937_64 SearchEngine::rngFor(quint64 a, quint64 b, quint64 c) const
{
    // One generator per request, derived from the seed and the request's position: draws do not depend
    // on the order in which responses arrive, so the same seed and responses give the same run.
    std::seed_seq seq{quint32(m_setup.config.search.seed), quint32(m_setup.config.search.seed >> 32), quint32(a),
                      quint32(b), quint32(c)};
    return std::mt19937_64(seq);
}

qint64 SearchEngine::addCandidate(Candidate candidate)
{
    if (!m_lifecycle.live())
        return 0;
    candidate.runId = m_run.id;
    candidate.id = m_store->addCandidate(candidate);
    if (!candidate.id) {
        // Nothing acts on a candidate that is not stored: the run pauses instead.
        storeFailed(QStringLiteral("adding a candidate"));
        return 0;
    }
    m_candidates.insert(candidate.id, candidate);
    Q_EMIT candidateAdded(candidate);
    return candidate.id;
}

void SearchEngine::updateCandidate(const Candidate &candidate)
{
    if (!m_lifecycle.live() || candidate.id <= 0)
        return;
    m_candidates.insert(candidate.id, candidate);
    if (!m_store->updateCandidate(candidate)) {
        storeFailed(QStringLiteral("updating candidate %1").arg(candidate.id));
        return;
    }
    Q_EMIT candidateUpdated(candidate);
}

void SearchEngine::persistRun()
{
    if (!m_lifecycle.live())
        return;
    if (!m_store->updateRun(m_run))
        storeFailed(QStringLiteral("updating the run"));
}

QString SearchEngine::budgetExceeded() const
{
    const BudgetConfig &b = m_setup.config.budget;
    if (b.maxLlmCalls && m_run.llmCalls >= *b.maxLlmCalls)
        return QStringLiteral("budget: %1 LLM calls reached (max_llm_calls)").arg(m_run.llmCalls);
    if (b.maxUsd && m_run.usd >= *b.maxUsd)
        return QStringLiteral("budget: $%1 spent (max_usd %2)").arg(m_run.usd, 0, 'f', 2).arg(*b.maxUsd);
    if (b.maxHours && m_previousSeconds + m_clock.elapsed() / 1000.0 >= *b.maxHours * 3600)
        return QStringLiteral("budget: %1 h of wall time reached (max_hours)").arg(*b.maxHours);
    return {};
}

bool SearchEngine::inTranslation() const
{
    return !m_translationDone && m_iteration <= m_setup.config.search.translateIters;
}

QString SearchEngine::forcedItem() const
{
    const int step = m_iteration - m_setup.config.search.translateIters - 1;
    return step >= 0 && step < m_schedule.size() && !inTranslation() ? m_schedule.at(step) : QString();
}

void SearchEngine::startWork(std::function<void()> work)
{
    if (!m_lifecycle.acting())
        return;
    if (m_lifecycle.deferring()) {
        m_deferred << std::move(work);
        checkPaused();
        return;
    }
    work();
}

void SearchEngine::sendLlm(const QString &phase, const ModelSpec &spec, const QString &prompt, int sampleIndex,
                           qint64 candidateId, LlmCallback callback, std::optional<double> temperature)
{
    if (!m_lifecycle.acting())
        return;
    LlmRequest request;
    request.spec = spec;
    request.owner = QStringLiteral("run %1").arg(m_run.id);
    request.maxAnswerBytes = m_setup.config.llm.maxAnswerBytes; // per request: the client may serve other runs
    request.resendBilled = m_setup.config.llm.resendBilled;
    request.maxTokens = m_setup.config.llm.maxTokens;
    request.system = PromptBuilder::systemPrompt(m_setup.target);
    request.prompt = prompt;
    request.sampleIndex = sampleIndex;
    request.temperature = temperature;
    m_ledger->send(phase, candidateId, request, std::move(callback));
}

void SearchEngine::paidFor(const LlmResponse &response)
{
    ++m_run.llmCalls;
    m_run.tokensIn += response.tokensIn;
    m_run.tokensOut += response.tokensOut;
    m_run.usd += response.usd;
    persistRun();
    Q_EMIT usageChanged(m_run.tokensIn, m_run.tokensOut, m_run.usd, m_run.llmCalls);
}

void SearchEngine::startIteration(int iteration, bool adopt)
{
    if (!m_lifecycle.live())
        return;
    m_iteration = iteration;
    m_iterationCandidates.clear();
    m_fixCounter = 0;
    const QString reason = budgetExceeded();
    if (!reason.isEmpty()) {
        finish(RunState::Stopped, reason);
        return;
    }
    log(QStringLiteral("iteration %1 of %2: beam %3%4")
            .arg(iteration)
            .arg(m_setup.config.search.iterations)
            .arg(m_beam.size())
            .arg(inTranslation() ? QStringLiteral(" (translation)") : QString()));
    const int n = m_setup.config.search.plansPerParent;
    // Count everything first, so an early cached answer cannot end the iteration while plans are still being issued.
    m_outstanding += int(m_beam.size()) * n + 1;
    int slot = 0;
    for (int p = 0; p < m_beam.size(); ++p) {
        for (int i = 0; i < n; ++i, ++slot) {
            if (adopt)
                adoptPlanSlot(m_beam.at(p), p, i, slot);
            else
                startWork([this, parent = m_beam.at(p), p, i, slot] { requestPlan(parent, p, i, slot); });
        }
    }
    if (adopt) {
        // Human candidates of the interrupted iteration take part too.
        for (const Candidate &c : std::as_const(m_candidates)) {
            if (c.iteration != iteration || c.origin != CandidateOrigin::Human || m_iterationCandidates.contains(c.id))
                continue;
            m_iterationCandidates << c.id;
            if (!isFinal(c.status)) {
                ++m_outstanding;
                if (c.code.isEmpty())
                    startWork([this, id = c.id] { requestCode(id); });
                else
                    startWork([this, id = c.id] { evaluate(id); });
            }
        }
    }
    workDone(); // the +1 above
}

void SearchEngine::adoptPlanSlot(qint64 parentId, int parentIndex, int planIndex, int slot)
{
    QList<Candidate> children;
    for (const Candidate &c : std::as_const(m_candidates))
        if (c.iteration == m_iteration && c.planSlot == slot && c.parentId == parentId
            && c.origin == CandidateOrigin::Llm)
            children << c;
    if (children.isEmpty()) {
        startWork(
            [this, parentId, parentIndex, planIndex, slot] { requestPlan(parentId, parentIndex, planIndex, slot); });
        return;
    }
    std::sort(children.begin(), children.end(),
              [](const Candidate &a, const Candidate &b) { return a.sample < b.sample; });
    const Candidate first = children.first();
    QSet<int> samples;
    // Adopt each stored child; each unfinished one gets its outstanding count and resumes where it stopped.
    auto adoptOne = [this](const Candidate &c) {
        m_iterationCandidates << c.id;
        if (!isFinal(c.status)) {
            ++m_outstanding;
            if (c.code.isEmpty() && c.origin == CandidateOrigin::Fix)
                startWork([this, id = c.id] { sendFixRequest(id); });
            else if (c.code.isEmpty())
                startWork([this, id = c.id] { requestCode(id); });
            else
                startWork([this, id = c.id] { evaluate(id); });
        }
    };
    for (const Candidate &c : std::as_const(children)) {
        samples.insert(c.sample);
        adoptOne(c);
        // Fixes of this child, and fixes that are still owed.
        qint64 tip = c.id;
        while (true) {
            Candidate fix;
            for (const Candidate &f : std::as_const(m_candidates))
                if (f.origin == CandidateOrigin::Fix && f.fixOf == tip)
                    fix = f;
            if (fix.id == 0)
                break;
            adoptOne(fix);
            tip = fix.id;
        }
        const Candidate last = m_candidates.value(tip);
        if (isFinal(last.status) && fixable(last.status)
            && m_fixAttempts.value(last.id) < m_setup.config.search.fixAttempts) {
            ++m_outstanding;
            startWork([this, id = last.id] { requestFix(id); });
        }
    }
    if (m_setup.config.search.skipPlanning) {
        // The samples not stored yet are asked again (the slot's count carries over); the others were adopted.
        if (samples.size() < m_setup.config.search.codePerPlan)
            startWork([this, parentId, parentIndex, planIndex, slot, samples] {
                requestPlan(parentId, parentIndex, planIndex, slot, samples);
            });
        else
            workDone();
        return;
    }
    if (first.status == CandidateStatus::Failed && first.plan.isEmpty()) {
        workDone(); // the plan request itself failed and was recorded
        return;
    }
    for (int k = 0; k < m_setup.config.search.codePerPlan; ++k) {
        if (samples.contains(k))
            continue;
        Candidate c = first;
        c.id = 0;
        c.sample = k;
        c.status = CandidateStatus::Coding;
        c.code.clear();
        c.score = std::numeric_limits<double>::quiet_NaN();
        c.metrics = {};
        c.feedback.clear();
        c.flags.clear();
        c.error.clear();
        c.inBeam = false;
        const qint64 id = addCandidate(c);
        m_iterationCandidates << id;
        ++m_outstanding;
        startWork([this, id] { requestCode(id); });
    }
    workDone(); // the plan slot
}

int SearchEngine::requestIndex(const Candidate &c, int attempt) const
{
    // The request's position in the run: identical prompts from different positions (two plan slots that
    // wrote the same plan) are different samples, and a resumed run asks each position the same way.
    const int position = c.planSlot >= 0 ? c.planSlot * m_setup.config.search.codePerPlan + c.sample
                                         : 50000 + int(c.id % 10000) * 4 + c.sample; // human plans
    return (c.iteration * 100000 + position) * 16 + attempt;
}

void SearchEngine::requestPlan(qint64 parentId, int parentIndex, int planIndex, int planSlot,
                               const QSet<int> &skipSamples)
{
    if (m_lifecycle.phase() == RunLifecycle::Phase::Draining) {
        workDone();
        return;
    }
    // What the parent's plan prompts need asked first (ISA filter, one-shot menu, example choice): once per
    // parent and phase, shared by its plan requests.
    const qint64 key = prepKey(parentId);
    if (const auto it = m_prep.constFind(key); it != m_prep.cend()) {
        sendPlan(parentId, parentIndex, planIndex, planSlot, *it, skipSamples);
        return;
    }
    const bool started = m_prepWaiting.contains(key);
    m_prepWaiting[key] << [this, key, parentId, parentIndex, planIndex, planSlot, skipSamples] {
        sendPlan(parentId, parentIndex, planIndex, planSlot, m_prep.value(key), skipSamples);
    };
    if (!started)
        prepareParent(parentId, key);
}

void SearchEngine::sendPlan(qint64 parentId, int parentIndex, int planIndex, int planSlot, const ParentPrep &prep,
                            const QSet<int> &skipSamples)
{
    if (m_lifecycle.phase() == RunLifecycle::Phase::Draining) {
        workDone();
        return;
    }
    const SearchConfig &s = m_setup.config.search;
    const bool translation = inTranslation() && !m_setup.agent.translationMenu.isEmpty();
    const QStringList fullMenu = menuFor(parentId);
    std::mt19937_64 rng = rngFor(quint64(m_iteration), quint64(parentIndex), quint64(planIndex));
    const QList<int> kept = MenuDropout::draw(int(fullMenu.size()), s.menuDropout, rng);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    const bool newIdea = uniform(rng) < s.newIdeaProbability;
    QList<CodeExample> examples;
    if (s.exampleRate) // the examples a model picked for this parent, each kept with example_rate
        examples = ExampleSelection::sample(m_setup.agent.codeExamples, prep.examples, *s.exampleRate, rng);
    else
        for (const CodeExample &e : m_setup.agent.codeExamples)
            if (uniform(rng) < 0.25)
                examples << e;

    PlanPromptInput in;
    in.agent = &m_setup.agent;
    in.problem = &m_setup.problem;
    in.target = &m_setup.target;
    const Candidate parent = m_candidates.value(parentId);
    in.parent = &parent;
    in.forcedItem = forcedItem();
    if (!in.forcedItem.isEmpty()) {
        const qsizetype index = fullMenu.indexOf(in.forcedItem);
        in.menu << MenuEntry{index >= 0 ? int(index) + 1 : 1, in.forcedItem};
    } else {
        for (int index : kept)
            in.menu << MenuEntry{index + 1, fullMenu.at(index)};
        in.inviteNewIdea = newIdea && !translation;
    }
    in.translation = translation;
    in.feedback = s.feedback;
    in.examples = examples;
    in.iteration = m_iteration;
    in.iterations = s.iterations;
    in.isaDocs = prep.isaDocs;
    in.direct = s.skipPlanning;
    in.editMode = s.editMode;
    const QString prompt = PromptBuilder::planPrompt(in);
    if (s.skipPlanning) {
        sendDirect(parentId, planSlot, prompt, skipSamples);
        return;
    }
    const ModelSpec &model = m_setup.planModels.at(planSlot % m_setup.planModels.size());
    sendLlm(QStringLiteral("plan"), model, prompt, m_iteration * 100000 + planSlot, 0,
            [this, parentId, planSlot, model](const LlmResponse &response, qint64 callId) {
                planArrived(parentId, planSlot, model.text, response, callId);
            });
}

Candidate SearchEngine::childOfAnswer(qint64 parentId, int planSlot, const QString &model, qint64 callId,
                                      const LlmResponse &response, const QString &request, const QString &plan) const
{
    Candidate c;
    c.parentId = parentId;
    c.iteration = m_iteration;
    c.origin = CandidateOrigin::Llm;
    c.planModel = model;
    c.planCallId = callId;
    c.planSlot = planSlot;
    if (!response.ok) {
        c.status = CandidateStatus::Failed;
        c.error = QStringLiteral("%1 request failed: %2").arg(request, response.error);
        return c;
    }
    const QString forced = forcedItem();
    const ResponseParser::MenuChoice choice = ResponseParser::parseMenuChoice(plan, menuFor(parentId));
    c.plan = plan;
    c.menuItem = !forced.isEmpty() ? forced : choice.isNew ? QStringLiteral("new: ") + choice.text : choice.text;
    c.status = CandidateStatus::Coding;
    return c;
}

void SearchEngine::planArrived(qint64 parentId, int planSlot, const QString &model, const LlmResponse &response,
                               qint64 callId)
{
    Candidate c = childOfAnswer(parentId, planSlot, model, callId, response, QStringLiteral("plan"), response.text);
    if (!response.ok) {
        m_iterationCandidates << addCandidate(c);
        log(QStringLiteral("plan request to %1 failed: %2").arg(model, response.error));
        workDone();
        return;
    }
    const int k = m_setup.config.search.codePerPlan;
    m_outstanding += k;
    for (int i = 0; i < k; ++i) {
        c.sample = i;
        const qint64 id = addCandidate(c);
        m_iterationCandidates << id;
        startWork([this, id] { requestCode(id); });
    }
    workDone(); // the plan itself
}

void SearchEngine::sendDirect(qint64 parentId, int planSlot, const QString &prompt, const QSet<int> &skipSamples)
{
    const int k = m_setup.config.search.codePerPlan;
    for (int i = 0; i < k; ++i) {
        if (skipSamples.contains(i))
            continue;
        ++m_outstanding;
        // The same rotation over the code models as code requests (plan slot, then sample).
        const ModelSpec &model = m_setup.codeModels.at((planSlot * k + i) % m_setup.codeModels.size());
        Candidate position;
        position.iteration = m_iteration;
        position.planSlot = planSlot;
        position.sample = i;
        sendLlm(QStringLiteral("direct"), model, prompt, requestIndex(position, 0), 0,
                [this, parentId, planSlot, i, model](const LlmResponse &response, qint64 callId) {
                    directArrived(parentId, planSlot, i, model.text, response, callId);
                });
    }
    workDone(); // the prompt slot; each sample carries its own count
}

void SearchEngine::directArrived(qint64 parentId, int planSlot, int sample, const QString &model,
                                 const LlmResponse &response, qint64 callId)
{
    // The reasoning and the chosen item's line stand as the candidate's plan (what a fix is told it meant to do).
    const qsizetype fence = response.text.indexOf(QLatin1String("```"));
    const QString plan = (fence >= 0 ? response.text.left(fence) : response.text).trimmed();
    Candidate c = childOfAnswer(parentId, planSlot, model, callId, response, QStringLiteral("code"), plan);
    c.codeModel = model;
    c.sample = sample;
    if (!response.ok) {
        if (const qint64 id = addCandidate(c))
            m_iterationCandidates << id;
        log(QStringLiteral("code request to %1 failed: %2").arg(model, response.error));
        workDone();
        return;
    }
    const qint64 id = addCandidate(c);
    if (!id)
        return;
    m_iterationCandidates << id;
    codeArrived(id, response, false); // the sample's outstanding count carries over
}

void SearchEngine::requestCode(qint64 candidateId)
{
    Candidate c = m_candidates.value(candidateId);
    if (m_lifecycle.phase() == RunLifecycle::Phase::Draining) {
        c.status = CandidateStatus::Failed;
        c.error = QStringLiteral("not started: %1").arg(m_lifecycle.reason());
        updateCandidate(c);
        workDone();
        return;
    }
    const Candidate parent = m_candidates.value(c.parentId);
    // Ensembling: code requests rotate across the code models over all requests of the iteration,
    // in a fixed order (plan slot, then sample), so every model writes code whatever N, K and B are.
    const int codeSlot = (c.planSlot >= 0 ? c.planSlot : 0) * m_setup.config.search.codePerPlan + c.sample;
    const ModelSpec &model = m_setup.codeModels.at(codeSlot % m_setup.codeModels.size());
    c.codeModel = model.text;
    updateCandidate(c);
    const QString prompt = PromptBuilder::codePrompt(m_setup.agent, m_setup.problem, m_setup.target, parent.code,
                                                     c.plan, m_setup.config.search.editMode);
    sendLlm(QStringLiteral("code"), model, prompt, requestIndex(c, 0), candidateId,
            [this, candidateId](const LlmResponse &response, qint64) { codeArrived(candidateId, response, false); });
}

void SearchEngine::codeArrived(qint64 candidateId, const LlmResponse &response, bool fix)
{
    Candidate c = m_candidates.value(candidateId);
    auto fail = [&](const QString &why) {
        c.status = CandidateStatus::Failed;
        c.error = why;
        updateCandidate(c);
        log(QStringLiteral("candidate %1: %2").arg(candidateId).arg(why.left(200)));
        workDone();
    };
    if (!response.ok) {
        fail(QStringLiteral("%1 request failed: %2")
                 .arg(fix ? QStringLiteral("fix") : QStringLiteral("code"), response.error));
        return;
    }
    // Cut at the output limit with no usable code: the model's limit, not a wrong answer; no fix is asked
    // for (it would be cut the same way).
    const QString cut = response.cutAtTokenLimit()
        ? QStringLiteral("the answer was cut at the model's output limit (max_tokens %1, stop reason '%2'); raise "
                         "llm.max_tokens in "
                         "the run's configuration to let the model finish")
              .arg(m_setup.config.llm.maxTokens)
              .arg(response.stopReason)
        : QString();
    if (m_setup.config.search.editMode && !fix) {
        const QString parentCode = m_candidates.value(c.parentId).code;
        const EditApplier::Result applied = EditApplier::apply(parentCode, EditApplier::parse(response.text));
        if (!applied.ok) {
            fail(cut.isEmpty() ? QStringLiteral("edit not applied: %1").arg(applied.error) : cut);
            return;
        }
        c.code = applied.code;
        if (applied.fuzzyBlocks > 0)
            c.flags << QStringLiteral("%1 edit block(s) applied with whitespace-normalized matching")
                           .arg(applied.fuzzyBlocks);
    } else {
        const auto code = ResponseParser::extractCode(response.text, m_setup.target.language);
        if (!code || code->trimmed().isEmpty()) {
            fail(cut.isEmpty()
                     ? QStringLiteral("the response contains no complete ```%1 code block").arg(m_setup.target.language)
                     : cut);
            return;
        }
        c.code = *code;
    }
    c.status = CandidateStatus::Pending;
    updateCandidate(c);
    startWork([this, candidateId] { evaluate(candidateId); }); // the outstanding count carries over
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
    c.planSlot = failed.planSlot;
    c.sample = failed.sample;
    c.fixOf = failedId;
    c.status = CandidateStatus::Coding;
    // Fixes rotate across the code models, starting after the model that wrote the failed code.
    const int codeSlot = (failed.planSlot >= 0 ? failed.planSlot : 0) * m_setup.config.search.codePerPlan
        + failed.sample;
    const int attempt = m_fixAttempts.value(failedId) + 1;
    const ModelSpec &model = m_setup.codeModels.at((codeSlot + attempt) % m_setup.codeModels.size());
    c.codeModel = model.text;
    const qint64 id = addCandidate(c);
    m_iterationCandidates << id;
    m_fixAttempts.insert(id, attempt);
    log(QStringLiteral("candidate %1 failed; asking %2 for a fix (candidate %3)")
            .arg(failedId)
            .arg(model.text)
            .arg(id));
    sendFixRequest(id);
}

void SearchEngine::sendFixRequest(qint64 fixId)
{
    const Candidate c = m_candidates.value(fixId);
    const Candidate failed = m_candidates.value(c.fixOf);
    // The failing steps' output, and the judge's verdict where they do not already carry it: a judge may
    // write its verdict only to its result file and exit quietly, and a fix prompt without it says nothing.
    QString errorLog;
    for (const StepResult &s : m_store->evaluationSteps(failed.id))
        if ((s.exitCode != 0 || s.timedOut || s.crashed) && !s.log.trimmed().isEmpty())
            errorLog += QStringLiteral("[%1]\n%2\n").arg(s.name, s.log);
    const QString verdict = failed.error.trimmed();
    if (errorLog.isEmpty())
        errorLog = failed.error;
    else if (!verdict.isEmpty() && !errorLog.contains(verdict))
        errorLog = QStringLiteral("[verdict]\n%1\n").arg(verdict) + errorLog;
    const QString prompt = PromptBuilder::fixPrompt(m_setup.agent, m_setup.problem, m_setup.target, failed.code,
                                                    failed.plan, errorLog);
    ModelSpec model = m_setup.codeModels.first();
    for (const ModelSpec &spec : std::as_const(m_setup.codeModels))
        if (spec.text == c.codeModel)
            model = spec;
    // Distinct per failed sample and attempt, so sibling fixes are separate samples.
    sendLlm(QStringLiteral("fix"), model, prompt, requestIndex(c, m_fixAttempts.value(fixId)), fixId,
            [this, fixId](const LlmResponse &response, qint64) { codeArrived(fixId, response, true); });
}

void SearchEngine::requestTranslationScore(qint64 candidateId)
{
    const Candidate c = m_candidates.value(candidateId);
    const QString prompt = PromptBuilder::translationScorePrompt(m_setup.problem, m_setup.target, c.code);
    sendLlm(
        QStringLiteral("score"), m_setup.planModels.first(), prompt, 0, candidateId,
        [this, candidateId](const LlmResponse &response, qint64) {
            Candidate c = m_candidates.value(candidateId);
            static const QRegularExpression s_number(QStringLiteral("(\\d+(?:\\.\\d+)?)"));
            const QRegularExpressionMatch m = s_number.match(response.text);
            const double score = response.ok && m.hasMatch() ? qBound(0.0, m.captured(1).toDouble(), 10.0) : 0.0;
            c.metrics.insert(QStringLiteral("translation_score"), score);
            if (!response.ok || !m.hasMatch())
                c.flags << QStringLiteral("translation score unavailable: %1")
                               .arg(response.ok ? QStringLiteral("no number in the answer") : response.error);
            updateCandidate(c);
            workDone();
        },
        0.0);
}

void SearchEngine::workDone()
{
    --m_outstanding;
    if (m_outstanding > 0 || !m_lifecycle.acting())
        return;
    if (m_lifecycle.phase() != RunLifecycle::Phase::Draining) {
        const QString reason = budgetExceeded();
        if (!reason.isEmpty())
            m_lifecycle.moveTo(RunLifecycle::Phase::Draining, reason);
    }
    selectBeam();
}

void SearchEngine::selectBeam()
{
    const SearchConfig &s = m_setup.config.search;
    const bool translation = inTranslation();
    const double slack = s.slackFor(m_iteration);
    QList<Candidate> pool;
    for (qint64 id : std::as_const(m_beam))
        pool << m_candidates.value(id); // incumbents keep their place without the parent rule
    for (qint64 id : std::as_const(m_iterationCandidates)) {
        const Candidate c = m_candidates.value(id);
        if (c.status != CandidateStatus::Correct || !c.hasScore())
            continue;
        if (translation) {
            // Translated candidates below the completeness threshold are kept apart (translate_score), and so
            // are those more than translate_perf_threshold times slower than their parent.
            if (s.translateScore
                && c.metrics.value(QStringLiteral("translation_score")).toDouble() < s.translateThreshold)
                continue;
            const Candidate parent = m_candidates.value(c.parentId);
            if (parent.hasScore() && parent.score > 0 && c.score > parent.score * s.translatePerfThreshold)
                continue;
        } else {
            const Candidate parent = m_candidates.value(c.parentId);
            if (parent.hasScore() && !clearlyBetter(c, parent, slack))
                continue; // not fast enough against its parent, beyond the noise of both measurements
        }
        pool << c;
    }
    std::stable_sort(pool.begin(), pool.end(), [](const Candidate &a, const Candidate &b) {
        return a.score < b.score || (a.score == b.score && a.id < b.id);
    });
    // Within noise, the earlier candidate goes first: each place takes the fastest left, or the earliest
    // of those left that it cannot be told apart from.
    for (qsizetype i = 0; i < pool.size(); ++i) {
        qsizetype pick = i;
        for (qsizetype j = i + 1; j < pool.size(); ++j)
            if (pool.at(j).id < pool.at(pick).id && withinNoise(pool.at(j), pool.at(i)))
                pick = j;
        if (pick != i)
            pool.move(pick, i);
    }
    QList<qint64> beam;
    QSet<QString> codes;
    QSet<QString> parentPlans;
    for (const Candidate &c : std::as_const(pool)) {
        if (beam.size() >= s.beamWidth)
            break;
        if (beam.contains(c.id))
            continue;
        const QString code = normalizedCode(c.code);
        const QString parentPlan = c.origin == CandidateOrigin::Root
            ? QString()
            : QString::number(c.parentId) + QLatin1Char('\x1f') + c.plan;
        if (codes.contains(code) || (!parentPlan.isEmpty() && parentPlans.contains(parentPlan)))
            continue; // duplicate: same code, or same parent and same plan
        codes.insert(code);
        if (!parentPlan.isEmpty())
            parentPlans.insert(parentPlan);
        beam << c.id;
    }
    if (translation) {
        bool allTranslated = true;
        bool anyTranslated = false;
        for (qint64 id : std::as_const(beam)) {
            const Candidate c = m_candidates.value(id);
            if (c.origin == CandidateOrigin::Root)
                continue;
            anyTranslated = true;
            // Without scores (translate_score: false) translation runs its translate_iters.
            allTranslated = allTranslated && s.translateScore
                && c.metrics.value(QStringLiteral("translation_score")).toDouble() >= s.translateThreshold;
        }
        if (anyTranslated && (allTranslated || m_iteration >= s.translateIters)) {
            // The original leaves the beam at the end of the translation phase.
            beam.removeIf([this](qint64 id) { return m_candidates.value(id).origin == CandidateOrigin::Root; });
            m_translationDone = true;
            log(QStringLiteral("translation phase done after iteration %1%2")
                    .arg(m_iteration)
                    .arg(allTranslated && m_iteration < s.translateIters
                             ? QStringLiteral(" (early: every beam candidate scores at least %1)")
                                   .arg(s.translateThreshold)
                             : QString()));
        }
    }
    if (beam.isEmpty())
        beam = m_beam; // never empty
    for (auto it = m_candidates.begin(); it != m_candidates.end(); ++it)
        it->inBeam = beam.contains(it.key());
    m_beam = beam;
    if (!m_store->setBeam(m_run.id, m_beam)) {
        storeFailed(QStringLiteral("recording the beam"));
        return;
    }
    Q_EMIT beamChanged(m_beam);
    m_run.iteration = m_iteration;
    persistRun();
    if (!m_lifecycle.live())
        return;
    QStringList scores;
    for (qint64 id : std::as_const(m_beam))
        scores << QStringLiteral("#%1 %2").arg(id).arg(m_candidates.value(id).score, 0, 'g', 4);
    log(QStringLiteral("iteration %1 done: beam %2").arg(m_iteration).arg(scores.join(QLatin1String(", "))));
    Q_EMIT iterationFinished(m_iteration);
    if (m_lifecycle.phase() == RunLifecycle::Phase::Draining) {
        finish(RunState::Stopped, m_lifecycle.reason());
        return;
    }
    if (m_iteration >= s.iterations) {
        finish(RunState::Finished, QStringLiteral("completed %1 iterations").arg(s.iterations));
        return;
    }
    if (s.earlyStop && !translation) {
        const double improvement = m_run.bestScore > 0 ? m_bestBeforeIteration / m_run.bestScore : 1.0;
        m_stale = improvement < *s.earlyStop ? m_stale + 1 : 0;
        if (m_stale >= s.earlyStopPatience) {
            finish(RunState::Finished,
                   QStringLiteral("early stop: best improved less than %1x in %2 iteration(s)")
                       .arg(*s.earlyStop)
                       .arg(m_stale));
            return;
        }
    }
    m_bestBeforeIteration = m_run.bestScore;
    startIteration(m_iteration + 1, false);
}

} // namespace autocomp
