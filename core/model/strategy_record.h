#pragma once

#include <QList>
#include <QMetaType>
#include <QString>

#include <limits>

namespace autocomp {

// What the runs say about one menu strategy (optionally for one model of the ensemble): how often the
// planner saw it, picked it, and how its candidates fared. Counts are over the runs asked about.
struct StrategyRecord {
    QString strategy;     // the menu text, or "new: ..." for an idea the planner proposed itself
    QString model;        // provider::model of the grouping; empty: all models together
    bool onMenu = true;   // false for a planner's own idea: it was never offered
    int offered = 0;      // plan prompts whose menu (after dropout) listed it and that got an answer
    int chosen = 0;       // plans that chose it
    int candidates = 0;   // code samples (fixes included) implementing those plans
    int compiled = 0;     // of those, built and ran: correct or incorrect results
    int correct = 0;
    int enteredBeam = 0;  // of those, selected into a beam at least once
    double medianGain = std::numeric_limits<double>::quiet_NaN(); // parent score / own score, correct ones
    double bestGain = std::numeric_limits<double>::quiet_NaN();
    QList<qint64> candidateIds;
};

} // namespace autocomp

Q_DECLARE_METATYPE(autocomp::StrategyRecord)
