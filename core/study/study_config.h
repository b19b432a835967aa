#pragma once

#include "model/run_config.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace autocomp {

// A parameter study (`autocomp study study.yaml`): one base run configuration, a list of problems (several
// targets allowed), one or two settings with the values they take (two: every combination, a grid) and a
// number of seeds. Every problem × point × seed is one run in the store.
//
//   name: beam              # optional; default: the file's base name. Letters, digits, '.', '_', '-'
//   base: run.yaml          # a run configuration, relative to the study file
//   problems: [rvv/saxpy, cpu/gemm]     # target/problem
//   vary: {beam_width: [1, 2, 4, 8]}    # one or two keys; a bare key is under search:, a dotted one
//                                       # (budget.max_usd) names its section
//   seeds: 2                # an integer N (seeds base.search.seed + 0 .. N-1) or a list of seeds
//   parallel: 2             # runs at once in this process (default 2)
//
// Each value is checked by building the run configuration it makes: a value the run configuration refuses
// is reported at the value's line in the study file, with the field named.
struct StudySetting
{
    QString key; // as written in vary: (beam_width, budget.max_usd)
    QStringList values; // as written, scalars
    QList<int> lines; // 1-based line of each value in the study file
};

// One combination of the varied settings: {key, value} in the order of vary:.
struct StudyPoint
{
    QList<std::pair<QString, QString>> values;
    // "beam_width=2" or "beam_width=2,plans_per_parent=4": how labels, the CSV and views name the point.
    QString name() const;
    bool operator==(const StudyPoint &other) const { return values == other.values; }
};

// One run the study needs.
struct StudyRun
{
    QString target;
    QString problem;
    StudyPoint point;
    quint64 seed = 0;
    RunConfig config; // the base with the point, the problem and the seed applied
    QByteArray
        configYaml; // what the run stores: the base re-emitted by yaml-cpp with those keys set (comments dropped)
    QString label; // StudyLabel::format(): how the store finds the run again
    QString problemName() const { return target + QLatin1Char('/') + problem; }
};

// The label that marks a run as part of a study: "study:NAME problem=T/P KEY=VALUE[ KEY=VALUE] seed=S".
// Views and resume find a study's runs by it (no other schema is needed).
struct StudyLabel
{
    QString study;
    QString problem; // target/problem
    QList<std::pair<QString, QString>> values; // the point
    quint64 seed = 0;

    static QString format(const QString &study, const QString &problem, const StudyPoint &point, quint64 seed);
    // nullopt for a label that is not a study's.
    static std::optional<StudyLabel> parse(const QString &label);
    StudyPoint point() const { return StudyPoint{values}; }
};

struct StudyConfig
{
    QString filePath;
    QString name;
    QString basePath; // absolute
    QByteArray baseYaml;
    RunConfig base;
    QList<std::pair<QString, QString>> problems; // target, problem
    QList<StudySetting> vary;
    QList<quint64> seeds;
    int parallel = 2;
    QList<StudyRun> runs; // problems × points × seeds, in that order

    // Every point of the grid, in the order of vary: (the first key slowest).
    QList<StudyPoint> points() const;

    // Parses the study, reads its base and builds every run's configuration. Errors name the file, the line
    // and the field; every error is reported, not only the first.
    static std::optional<StudyConfig> fromYaml(const QByteArray &yaml, const QString &filePath, QStringList *errors);
    static std::optional<StudyConfig> fromFile(const QString &path, QStringList *errors);
};

} // namespace autocomp
