#include "menu_invariants.h"

#include "insights/menu_insights.h"
#include "store/run_store.h"

namespace autocomp::test {

QStringList menuInsightViolations(RunStore &store)
{
    QStringList out;
    QList<qint64> runs;
    for (const RunInfo &run : store.runs())
        runs << run.id;
    for (qint64 runId : std::as_const(runs)) {
        for (auto grouping :
             {MenuInsights::Grouping::Strategy, MenuInsights::Grouping::PlanModel, MenuInsights::Grouping::CodeModel}) {
            for (const StrategyRecord &r : MenuInsights::compute(store, {runId}, grouping)) {
                auto check = [&](bool holds, const char *rule) {
                    if (!holds)
                        out << QStringLiteral("run %1, '%2' (%3): %4 (offered %5, chosen %6, candidates %7, compiled "
                                              "%8, correct %9, "
                                              "duplicates %10, entered beam %11)")
                                   .arg(runId)
                                   .arg(r.strategy, r.model, QLatin1String(rule))
                                   .arg(r.offered)
                                   .arg(r.chosen)
                                   .arg(r.candidates)
                                   .arg(r.compiled)
                                   .arg(r.correct)
                                   .arg(r.duplicates)
                                   .arg(r.enteredBeam);
                };
                check(r.chosen <= r.offered, "chosen <= offered");
                check(r.correct <= r.compiled, "correct <= compiled");
                check(r.compiled <= r.candidates, "compiled <= candidates");
                check(r.duplicates <= r.candidates, "duplicates <= candidates");
                check(r.enteredBeam <= r.correct, "entered beam <= correct");
            }
        }
    }
    return out;
}

} // namespace autocomp::test
