#pragma once

#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>
#include <QVariantMap>

namespace autocomp {

// A problem: sols/<target>/<name>/problem.yaml (DESIGN.md §5).
struct Problem
{
    QString name;
    QString target;
    QString dir; // absolute
    QString description;
    QString startFile; // absolute
    QString referenceFile;
    QString contextFile;
    QString context; // contents of contextFile
    QString signature;
    QString entry; // the kernel's symbol (problem.yaml `entry`, default: the name)
    QString dtype = QStringLiteral("fp32");
    QList<QVariantMap> shapes; // e.g. {M: 512, N: 512, K: 512}
    QStringList shapeKeys; // the shapes' keys in problem.yaml's order (a QVariantMap sorts them)
    int benchShape = 0; // index into shapes used for timing
    double rtol = 1e-4;
    double atol = 1e-5;
    bool toleranceSet = false; // problem.yaml names a tolerance (else a kernelbench judge picks one by dtype)
    QString flops; // expression over shape names
    QString bytes;
    bool allowLibraries = false;
    // Libraries the kernel may link (problem.yaml `libraries: [openblas]`, only with allowLibraries),
    // given to the link step as -l<name> by the {libraries} placeholder.
    QStringList libraries;
    // Shapes drawn per evaluation besides the declared ones (problem.yaml `shape_ranges: {M: [1, 600]}`,
    // `random_shapes: 2`): the judge draws them from its secret seed.
    QList<QPair<QString, QPair<qint64, qint64>>> shapeRanges;
    int randomShapes = 2;
    bool allowThreads = false; // the kernel may start (and must join) threads
    // problem.yaml `format`: "" for the shipped kinds (signature, shapes), "kernelbench" for a
    // KernelBench file (class Model, module-level sizes, get_inputs()): no shapes; its sizes are the
    // file's, multiplied by `scale` (chosen at import so one reference pass takes milliseconds here).
    QString format;
    int level = 0; // KernelBench level (1 single ops, 2 fusions, 3 architectures, 4 models); 0: none
    double scale = 1.0; // {scale}: the factor applied to the reference's module-level sizes
    // "M=1:600,N=1:600" for the judge's command line.
    QString shapeRangesArgument() const;

    QString startCode() const;
    // "M=512,N=512,K=512;M=1000,..." for the harness command line, keys in problem.yaml's order.
    QString shapesArgument() const;
    // One shape, "M=512,N=512,K=512"; empty for an index out of range.
    QString shapeArgument(int index) const;
};

} // namespace autocomp
