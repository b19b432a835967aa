#pragma once

#include "catalog/repository.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <functional>

namespace autocomp {

// `autocomp problems import`: KernelBench problem files (class Model, module-level sizes,
// get_inputs(), get_init_inputs()) become kernelbench problems as they are. A problem folder
// sols/kernelbench/level<N>/<file name>/ in the user's data directory refers to the user's file (it is
// not copied) and records the level and the size scale; its start.py is the reference as ModelNew.
struct KernelBenchImportOptions
{
    int level = -1; // -1: from a "levelN" folder in the file's path, else 0
    double scale = 0; // 0: picked per file for the device (cpu: one reference pass <= ~50 ms, <= 1 GB)
    QString device; // empty: the kernelbench target's setting (cpu unless overridden)
    QString destination; // the data directory written (default: Repository::userDataDir())
};

struct KernelBenchImported
{
    QString id; // "level1/88_MinGPTNewGelu"
    QString file; // the user's file
    QString dir; // the problem folder written
    double scale = 1;
    double forwardMs = 0; // one reference forward pass at that scale, measured by the importer
    QString error; // why this file was not imported (then id and dir are empty)
};

// The text appended to a reference file to make its start code (the reference itself as ModelNew).
QString kernelBenchStartSuffix();

// The .py files under `paths` (files, or folders searched three levels deep) that look like
// KernelBench problems. Files named explicitly are always returned.
QStringList kernelBenchFiles(const QStringList &paths, QStringList *notFound);

// Imports the files, running the target's importer (backends/kernelbench/tools/kb_import.py) once for
// all of them. `progress` gets a line per file as it is measured. Returns one entry per file; *error
// is set (and nothing returned) when the importer cannot run at all.
QList<KernelBenchImported> importKernelBench(const Repository &repository, const QStringList &files,
                                             const KernelBenchImportOptions &options,
                                             const std::function<void(const QString &)> &progress, QString *error);

} // namespace autocomp
