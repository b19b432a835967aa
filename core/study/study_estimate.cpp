#include "study/study_estimate.h"

#include "agents/prompt_builder.h"
#include "llm/price_table.h"

#include <algorithm>

namespace autocomp {

namespace {

constexpr qint64 AnswerTokens = 1000;

// Mean dollars of one call of `tokensIn` over the models taking turns.
double callCost(const QList<ModelSpec> &models, qint64 tokensIn, const PriceTable &prices, QStringList *unpriced)
{
    if (models.isEmpty())
        return 0;
    double sum = 0;
    for (const ModelSpec &spec : models) {
        if (const auto cost = prices.cost(spec.provider, spec.model, tokensIn, AnswerTokens, 0))
            sum += *cost;
        else if (unpriced && !unpriced->contains(spec.provider + QStringLiteral("::") + spec.model))
            *unpriced << spec.provider + QStringLiteral("::") + spec.model;
    }
    return sum / models.size();
}

} // namespace

RunEstimate estimateRun(const RunSetup &setup, const PriceTable &prices, QStringList *unpriced)
{
    const SearchConfig &s = setup.config.search;
    RunEstimate e;
    const qint64 plans = qint64(s.beamWidth) * s.plansPerParent;
    // skip_planning: the code call is the only one per sample (it writes its own reasoning and choice).
    e.planCalls = s.skipPlanning ? 0 : plans * s.iterations;
    e.codeCalls = plans * s.codePerPlan * s.iterations;
    e.fixCalls = plans * s.codePerPlan * s.fixAttempts * s.iterations;
    // Per parent and iteration: the ISA filter (two calls), the one-shot menu and the example choice (one each); one
    // translation score per candidate of a translation iteration.
    const qint64 perParent = (s.isaFilter ? 2 : 0) + (s.menuStrategy == QLatin1String("one-shot") ? 1 : 0)
        + (s.exampleRate ? 1 : 0);
    e.otherCalls = perParent * s.beamWidth * s.iterations
        + (s.translateScore ? plans * s.codePerPlan * std::min(s.translateIters, s.iterations) : 0);

    Candidate root;
    root.origin = CandidateOrigin::Root;
    root.status = CandidateStatus::Correct;
    root.code = setup.problem.startCode();
    PlanPromptInput input;
    input.agent = &setup.agent;
    input.problem = &setup.problem;
    input.target = &setup.target;
    input.parent = &root;
    for (qsizetype i = 0; i < setup.agent.menu.size(); ++i)
        input.menu << MenuEntry(int(i + 1), setup.agent.menu.at(i));
    input.iterations = s.iterations;
    input.feedback = s.feedback;
    const qint64 system = PromptBuilder::systemPrompt(setup.target).size();
    const QString plan = QStringLiteral("Chosen optimization: 1. %1\n").arg(setup.agent.menu.value(0));
    const qint64 planIn = (system + PromptBuilder::planPrompt(input).size()) / 4;
    const qint64 codeIn =
        (system
         + PromptBuilder::codePrompt(setup.agent, setup.problem, setup.target, root.code, plan, s.editMode).size())
        / 4;
    const qint64 fixIn =
        (system + PromptBuilder::fixPrompt(setup.agent, setup.problem, setup.target, root.code, plan, QString()).size())
            / 4
        + 500;
    e.tokensIn = e.planCalls * planIn + (e.codeCalls + e.fixCalls) * codeIn + e.otherCalls * planIn;
    e.tokensOut = e.calls() * AnswerTokens;
    e.usd = e.planCalls * callCost(setup.planModels, planIn, prices, unpriced)
        + e.codeCalls * callCost(setup.codeModels, codeIn, prices, unpriced)
        + e.fixCalls * callCost(setup.codeModels, fixIn, prices, unpriced)
        + e.otherCalls * callCost(setup.planModels, planIn, prices, unpriced);
    return e;
}

StudyEstimate estimateRuns(const QList<RunSetup> &setups, const PriceTable &prices)
{
    StudyEstimate total;
    for (const RunSetup &setup : setups) {
        const RunEstimate e = estimateRun(setup, prices, &total.unpriced);
        ++total.runs;
        total.calls += e.calls();
        total.tokensIn += e.tokensIn;
        total.tokensOut += e.tokensOut;
        total.usd += e.usd;
    }
    return total;
}

} // namespace autocomp
