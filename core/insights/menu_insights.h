#pragma once

#include "model/strategy_record.h"

#include <QList>
#include <QString>

namespace autocomp {

class RunStore;

// What runs teach about their optimization menu: for each strategy, how often it was offered, chosen,
// compiled, correct, selected into the beam, and its gain over the parent (parent score / own score,
// over correct candidates: 2.0 means twice as fast as the candidate it was derived from).
//
// Offered and chosen are counted per plan request, once each (a resumed run's reused answer is the same
// request; a cached answer that a plan came from is a request): offered from the menu its prompt listed
// (PromptBuilder::offeredMenu) plus the item it chose, so chosen <= offered also where prompts are not
// stored (human plans, imports). A correct candidate entered the beam when it is in the beam now or the
// engine derived a candidate from it (only beam members are parents of planned work). See StrategyRecord
// for the invariants. Strategies a model proposed for a parent's menu (search.menu_strategy: one-shot, read
// from the run's "menu" calls) are marked `proposed`: the views list them apart from the agent's own, with
// the same figures.
class MenuInsights
{
public:
    enum class Grouping {
        Strategy, // one row per strategy, all models together
        PlanModel, // one row per strategy and plan model (who was offered it and chose it)
        CodeModel, // one row per strategy and code model (who implemented it; offered/chosen do not apply)
    };

    // Records of the given runs together, ordered by strategy then model. A run that does not exist is
    // skipped; an unreadable store gives what could be read and sets *error.
    static QList<StrategyRecord> compute(RunStore &store, const QList<qint64> &runIds, Grouping grouping,
                                         QString *error = nullptr);
    // Every run of a target, oldest first.
    static QList<qint64> runsOfTarget(RunStore &store, const QString &target);
    // Runs that used an agent (RunInfo::agent), oldest first.
    static QList<qint64> runsOfAgent(RunStore &store, const QString &agent);
    // RFC 4180 CSV with a header line; gains with 4 significant digits, empty where there is none.
    static QString toCsv(const QList<StrategyRecord> &records);
};

} // namespace autocomp
