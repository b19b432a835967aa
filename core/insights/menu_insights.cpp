#include "insights/menu_insights.h"

#include "agents/prompt_builder.h"
#include "search/menu_strategy.h"
#include "store/run_store.h"

#include <QHash>
#include <QSet>

#include <algorithm>
#include <map>

namespace autocomp {

namespace {

struct Key
{
    QString strategy;
    QString model;
    bool operator<(const Key &other) const
    {
        return strategy != other.strategy ? strategy < other.strategy : model < other.model;
    }
};

struct Tally
{
    StrategyRecord record;
    QList<double> gains;
};

// Built and ran (or was built where there is no hardware to run it).
bool compiled(const Candidate &c)
{
    switch (c.status) {
    case CandidateStatus::Correct:
    case CandidateStatus::Incorrect:
    case CandidateStatus::Testing:
    case CandidateStatus::Benchmarking:
    case CandidateStatus::NoHardware: return true;
    case CandidateStatus::Failed: {
        const QString word = statusWord(c);
        return word == QLatin1String("crash") || word == QLatin1String("timeout");
    }
    default: return false;
    }
}

QString csvField(const QString &text)
{
    if (!text.contains(QLatin1Char(',')) && !text.contains(QLatin1Char('"')) && !text.contains(QLatin1Char('\n')))
        return text;
    QString quoted = text;
    quoted.replace(QLatin1Char('"'), QLatin1String("\"\""));
    return QLatin1Char('"') + quoted + QLatin1Char('"');
}

QString csvNumber(double value) { return std::isnan(value) ? QString() : QString::number(value, 'g', 4); }

} // namespace

QList<StrategyRecord> MenuInsights::compute(RunStore &store, const QList<qint64> &runIds, Grouping grouping,
                                            QString *error)
{
    std::map<Key, Tally> tallies;
    auto tally = [&](const QString &strategy, const QString &model) -> Tally & {
        Tally &t = tallies[Key{strategy, model}];
        if (t.record.strategy.isEmpty()) {
            t.record.strategy = strategy;
            t.record.model = model;
            t.record.onMenu = !strategy.startsWith(QLatin1String("new: "));
        }
        return t;
    };

    QSet<QString> proposed; // strategies a one-shot menu call proposed, in any of the runs
    for (qint64 runId : runIds) {
        if (!store.run(runId)) {
            if (!store.lastError().isEmpty() && error)
                *error = store.lastError();
            continue;
        }
        for (const LlmCall &call : store.llmCalls(runId, MenuStrategy::oneShotPhase()))
            if (call.status == QLatin1String("ok") || call.status == QLatin1String("cached"))
                for (const QString &item : MenuStrategy::proposedBy(call.prompt, call.response))
                    proposed.insert(item);
        const QList<Candidate> candidates = store.candidates(runId);
        QHash<qint64, const Candidate *> byId;
        QSet<qint64> beam; // selected into a beam at some point
        QHash<qint64, QString> planModelOfCall;
        for (const Candidate &c : candidates) {
            byId.insert(c.id, &c);
            if (c.inBeam)
                beam.insert(c.id);
            if (c.planCallId > 0 && !c.planModel.isEmpty())
                planModelOfCall.insert(c.planCallId, c.planModel);
        }
        for (const Candidate &c : candidates)
            if (c.parentId > 0 && c.origin != CandidateOrigin::Human && c.origin != CandidateOrigin::Root)
                beam.insert(c.parentId);

        // One plan request is one offer of each item its prompt listed: a plan call answered ("ok"), or
        // reused from the cache ("cached") where it is not the same request again (a resumed run records
        // the answer it reuses once more, under the same request hash), or a plan whose request is not
        // stored (a human plan, an imported run). The item a request chose counts as offered by it too: the
        // planner saw it (or proposed it), so chosen never exceeds offered.
        struct Request
        {
            QStringList offered;
            QString chosen;
            QString model;
        };
        std::map<qint64, Request> requests;
        if (grouping != Grouping::CodeModel) {
            QSet<qint64> chosenCalls;
            for (const Candidate &c : candidates)
                if (c.planCallId > 0)
                    chosenCalls.insert(c.planCallId);
            // Plan requests, and with skip_planning the direct code requests (their prompts list the menu alike).
            const QList<LlmCall> calls = store.llmCalls(runId, QStringLiteral("plan"))
                + store.llmCalls(runId, QStringLiteral("direct"));
            QSet<QString> answered;
            for (const LlmCall &call : calls)
                if (call.status == QLatin1String("ok"))
                    answered.insert(call.requestHash);
            QSet<QString> reused;
            for (const LlmCall &call : calls) {
                if (call.status == QLatin1String("cached")) {
                    if (!chosenCalls.contains(call.id)
                        && (answered.contains(call.requestHash) || reused.contains(call.requestHash)))
                        continue;
                    reused.insert(call.requestHash);
                } else if (call.status != QLatin1String("ok")) {
                    continue;
                }
                Request &r = requests[call.id];
                r.offered = PromptBuilder::offeredMenu(call.prompt);
                r.model = grouping == Grouping::PlanModel
                    ? planModelOfCall.value(call.id, call.provider + QStringLiteral("::") + call.model)
                    : QString();
            }
            for (const Candidate &c : candidates) {
                if (c.origin == CandidateOrigin::Root || c.origin == CandidateOrigin::Fix || c.menuItem.isEmpty())
                    continue;
                Request &r = requests[c.planCallId > 0 ? c.planCallId : -c.id];
                r.chosen = c.menuItem;
                if (grouping == Grouping::PlanModel && r.model.isEmpty())
                    r.model = c.planModel;
            }
            for (const auto &[id, r] : requests) {
                QStringList items = r.offered;
                if (!r.chosen.isEmpty() && !items.contains(r.chosen))
                    items << r.chosen;
                for (const QString &item : std::as_const(items))
                    ++tally(item, r.model).record.offered;
                if (!r.chosen.isEmpty())
                    ++tally(r.chosen, r.model).record.chosen;
            }
        }

        for (const Candidate &c : candidates) {
            if (c.origin == CandidateOrigin::Root || c.menuItem.isEmpty())
                continue;
            const QString model = grouping == Grouping::PlanModel ? c.planModel
                : grouping == Grouping::CodeModel                 ? c.codeModel
                                                                  : QString();
            Tally &t = tally(c.menuItem, model);
            if (c.status == CandidateStatus::Planning || (c.code.isEmpty() && c.status == CandidateStatus::Coding))
                continue; // no code yet
            ++t.record.candidates;
            t.record.candidateIds << c.id;
            if (c.status == CandidateStatus::Duplicate) {
                ++t.record.duplicates;
                continue;
            }
            if (compiled(c))
                ++t.record.compiled;
            if (c.status != CandidateStatus::Correct)
                continue;
            ++t.record.correct;
            const Candidate *parent = byId.value(c.parentId);
            if (parent && parent->hasScore() && parent->score > 0 && c.hasScore() && c.score > 0)
                t.gains << parent->score / c.score;
            if (beam.contains(c.id))
                ++t.record.enteredBeam;
        }
    }

    QList<StrategyRecord> out;
    out.reserve(qsizetype(tallies.size()));
    for (auto &[key, t] : tallies) {
        t.record.proposed = t.record.onMenu && proposed.contains(t.record.strategy);
        if (!t.gains.isEmpty()) {
            std::sort(t.gains.begin(), t.gains.end());
            const qsizetype n = t.gains.size();
            t.record.medianGain = n % 2 ? t.gains.at(n / 2) : (t.gains.at(n / 2 - 1) + t.gains.at(n / 2)) / 2;
            t.record.bestGain = t.gains.last();
        }
        out << t.record;
    }
    return out;
}

QList<qint64> MenuInsights::runsOfTarget(RunStore &store, const QString &target)
{
    QList<qint64> out;
    for (const RunInfo &run : store.runs())
        if (run.target == target)
            out << run.id;
    std::sort(out.begin(), out.end());
    return out;
}

QList<qint64> MenuInsights::runsOfAgent(RunStore &store, const QString &agent)
{
    QList<qint64> out;
    for (const RunInfo &run : store.runs())
        if (run.agent == agent)
            out << run.id;
    std::sort(out.begin(), out.end());
    return out;
}

QString MenuInsights::toCsv(const QList<StrategyRecord> &records)
{
    QString out = QStringLiteral(
        "strategy,model,on_menu,offered,chosen,candidates,compiled,correct,entered_beam,median_gain,best_gain\r\n");
    for (const StrategyRecord &r : records) {
        out += csvField(r.strategy) + QLatin1Char(',') + csvField(r.model) + QLatin1Char(',')
            + (r.onMenu ? QStringLiteral("yes") : QStringLiteral("no")) + QLatin1Char(',') + QString::number(r.offered)
            + QLatin1Char(',') + QString::number(r.chosen) + QLatin1Char(',') + QString::number(r.candidates)
            + QLatin1Char(',') + QString::number(r.compiled) + QLatin1Char(',') + QString::number(r.correct)
            + QLatin1Char(',') + QString::number(r.enteredBeam) + QLatin1Char(',') + csvNumber(r.medianGain)
            + QLatin1Char(',') + csvNumber(r.bestGain) + QStringLiteral("\r\n");
    }
    return out;
}

} // namespace autocomp
