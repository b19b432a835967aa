#pragma once

#include <QString>
#include <QTextStream>

// `autocomp study STUDY.yaml`: a parameter study (core/study). Every problem × point × seed is a run in the
// store, labelled with the study; `parallel` runs at once in this process through one LLM client and one
// set of evaluation slots. Started again after a kill (or a stop), it skips the runs that ended, resumes
// those that did not and starts the rest, so nothing paid is paid again.
//
// Writes two CSVs (StudyReport::runsCsv, one row per run; pointsCsv, one row per problem × point with the
// Pareto front) and prints the per-point table. --dry-run prints the number of runs, the LLM calls and the
// cost estimate (StudyEstimate) and sends nothing; --report prints and writes the report from the store
// without running anything.
namespace autocomp::cli {

struct StudyOptions
{
    QString studyPath;
    QString storePath;
    QString csvPath; // empty: STUDY_DIR/NAME.csv (the points CSV beside it: NAME.points.csv)
    int parallel = 0; // 0: the study's
    bool dryRun = false;
    bool reportOnly = false;
};

// Exit status: 0 every run ended (finished, or stopped by its budget), 1 error (bad study, a run that could not start),
// 3 a run failed, 4 stopped (SIGINT/SIGTERM) or a run paused: run the command again to go on.
int runStudy(const StudyOptions &options, QTextStream &out, QTextStream &err);

} // namespace autocomp::cli
