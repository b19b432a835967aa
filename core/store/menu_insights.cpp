#include "store/menu_insights.h"

#include "agents/prompt_builder.h"
#include "store/run_store.h"

#include <QHash>
#include <QSet>

#include <algorithm>
#include <map>

namespace autocomp {

namespace {

struct Key {
    QString strategy;
    QString model;
    bool operator<(const Key &other) const
    {
        return strategy != other.strategy ? strategy < other.strategy : model < other.model;
    }
};

struct Tally {
    StrategyRecord record;
    QSet<qint64> plans;
    QList<double> gains;
};

bool compiled(CandidateStatus status)
{
    return status == CandidateStatus::Correct || status == CandidateStatus::Incorrect || status == CandidateStatus::Testing
        || status == CandidateStatus::Benchmarking;
}

QString csvField(const QString &text)
{
    if (!text.contains(QLatin1Char(',')) && !text.contains(QLatin1Char('"')) && !text.contains(QLatin1Char('\n')))
        return text;
    QString quoted = text;
    quoted.replace(QLatin1Char('"'), QLatin1String("\"\""));
    return QLatin1Char('"') + quoted + QLatin1Char('"');
}

QString csvNumber(double value)
{
    return std::isnan(value) ? QString() : QString::number(value, 'g', 4);
}

} // namespace

QList<StrategyRecord> MenuInsights::compute(RunStore &store, const QList<qint64> &runIds, Grouping grouping, QString *error)
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

    for (qint64 runId : runIds) {
        if (!store.run(runId)) {
            if (!store.lastError().isEmpty() && error)
                *error = store.lastError();
            continue;
        }
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

        if (grouping != Grouping::CodeModel) {
            // A resumed run records a reused answer again ("cached") under the request hash of the answer it
            // reuses: that is the same offer. Answers received ("ok") each count (an imported run may have no hashes).
            const QList<LlmCall> calls = store.llmCalls(runId, QStringLiteral("plan"));
            QSet<QString> answered;
            for (const LlmCall &call : calls)
                if (call.status == QLatin1String("ok"))
                    answered.insert(call.requestHash);
            QSet<QString> reused;
            for (const LlmCall &call : calls) {
                if (call.status == QLatin1String("cached")) {
                    if (answered.contains(call.requestHash) || reused.contains(call.requestHash))
                        continue;
                    reused.insert(call.requestHash);
                } else if (call.status != QLatin1String("ok")) {
                    continue;
                }
                const QString model = grouping == Grouping::PlanModel
                    ? planModelOfCall.value(call.id, call.provider + QStringLiteral("::") + call.model)
                    : QString();
                for (const QString &item : PromptBuilder::offeredMenu(call.prompt))
                    ++tally(item, model).record.offered;
            }
        }

        for (const Candidate &c : candidates) {
            if (c.origin == CandidateOrigin::Root || c.menuItem.isEmpty())
                continue;
            const QString model = grouping == Grouping::PlanModel ? c.planModel
                : grouping == Grouping::CodeModel               ? c.codeModel
                                                                 : QString();
            Tally &t = tally(c.menuItem, model);
            if (grouping != Grouping::CodeModel && c.origin != CandidateOrigin::Fix)
                t.plans.insert(c.planCallId > 0 ? c.planCallId : -c.id); // human plans have no call
            if (c.status == CandidateStatus::Planning || (c.code.isEmpty() && c.status == CandidateStatus::Coding))
                continue; // no code yet
            ++t.record.candidates;
            t.record.candidateIds << c.id;
            if (compiled(c.status))
                ++t.record.compiled;
            if (c.status == CandidateStatus::Correct) {
                ++t.record.correct;
                const Candidate *parent = byId.value(c.parentId);
                if (parent && parent->hasScore() && parent->score > 0 && c.hasScore() && c.score > 0)
                    t.gains << parent->score / c.score;
            }
            if (beam.contains(c.id))
                ++t.record.enteredBeam;
        }
    }

    QList<StrategyRecord> out;
    out.reserve(qsizetype(tallies.size()));
    for (auto &[key, t] : tallies) {
        t.record.chosen = int(t.plans.size());
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
    QString out = QStringLiteral("strategy,model,on_menu,offered,chosen,candidates,compiled,correct,entered_beam,median_gain,best_gain\r\n");
    for (const StrategyRecord &r : records) {
        out += csvField(r.strategy) + QLatin1Char(',') + csvField(r.model) + QLatin1Char(',')
            + (r.onMenu ? QStringLiteral("yes") : QStringLiteral("no")) + QLatin1Char(',') + QString::number(r.offered)
            + QLatin1Char(',') + QString::number(r.chosen) + QLatin1Char(',') + QString::number(r.candidates) + QLatin1Char(',')
            + QString::number(r.compiled) + QLatin1Char(',') + QString::number(r.correct) + QLatin1Char(',')
            + QString::number(r.enteredBeam) + QLatin1Char(',') + csvNumber(r.medianGain) + QLatin1Char(',')
            + csvNumber(r.bestGain) + QStringLiteral("\r\n");
    }
    return out;
}

} // namespace autocomp
