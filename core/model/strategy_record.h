#pragma once

#include <QList>
#include <QMetaType>
#include <QString>

#include <limits>

namespace autocomp {

// What the runs say about one menu strategy (optionally for one model of the ensemble): how often the
// planner saw it, picked it, and how its candidates fared. Counts are over the runs asked about.
struct StrategyRecord
{
    QString strategy; // the menu text, or "new: ..." for an idea the planner proposed itself
    QString model; // provider::model of the grouping; empty: all models together
    bool onMenu = true; // false for a planner's own idea: it was never offered
    // A strategy a model proposed for a parent's menu (search.menu_strategy: one-shot), not the agent's own.
    bool proposed = false;
    // Invariants: chosen <= offered, correct <= compiled <= candidates, duplicates <= candidates,
    // enteredBeam <= correct.
    int offered = 0; // plan requests (answered or cached, once each) whose menu listed it, or that chose it
    int chosen = 0; // plan requests whose plan chose it
    int candidates = 0; // code samples (fixes included) implementing those plans, with code
    int compiled = 0; // of those, built (and ran, where there is hardware): not a compile error or duplicate
    int correct = 0;
    int duplicates = 0; // of the candidates, the same code as one evaluated before: plans that changed nothing
    int enteredBeam = 0; // of the correct ones, selected into a beam at least once
    double medianGain = std::numeric_limits<double>::quiet_NaN(); // parent score / own score, correct ones
    double bestGain = std::numeric_limits<double>::quiet_NaN();
    QList<qint64> candidateIds;
};

} // namespace autocomp

Q_DECLARE_METATYPE(autocomp::StrategyRecord)
