// `autocomp export` and `import`: a run to and from a JSONL archive, a schedule or an Autocomp directory.
#include "cli_commands.h"
#include "cli_common.h"
#include "cli_run_control.h"

#include "catalog/repository.h"
#include "exchange/autocomp_dir.h"
#include "exchange/run_archive.h"

#include <QFileInfo>

namespace autocomp::cli {

int cmdExport(const Args &args)
{
    const QString format = args.option(QStringLiteral("--format"), QStringLiteral("jsonl"));
    const QString outPath = args.option(QStringLiteral("--out"));
    bool ok = false;
    const qint64 runId = args.positional.value(1).toLongLong(&ok);
    if (!ok || outPath.isEmpty()) {
        err() << "usage: autocomp export RUN_ID --format jsonl|schedule|autocomp-dir --out PATH" << Qt::endl;
        return ExitUsage;
    }
    if (format != QLatin1String("jsonl") && format != QLatin1String("schedule")
        && format != QLatin1String("autocomp-dir")) {
        err() << "autocomp: export format '" << format << "' is not available; use jsonl, schedule or autocomp-dir"
              << Qt::endl;
        return ExitUsage;
    }
    auto store = openStore(args, cli::StoreUse::Read);
    if (!store)
        return ExitError;
    // The exports write the unit stored with the run; a run stored before units were gets its target's first
    // (where the store can be written; otherwise it is exported without one, as a metric the target no longer has).
    if (const auto run = store->run(runId); run && run->metricUnit.isEmpty() && !store->isReadOnly())
        store->fillMetricUnits([repository = Repository()](const RunInfo &r) { return repository.metricUnitOf(r); });
    QString error;
    if (format == QLatin1String("schedule")) {
        if (!exportSchedule(*store, runId, outPath, &error)) {
            err() << "autocomp: " << error << Qt::endl;
            return ExitError;
        }
        return ExitOk;
    }
    if (format == QLatin1String("autocomp-dir")) {
        if (!exportAutocompDir(*store, runId, outPath, &error)) {
            err() << "autocomp: " << error << Qt::endl;
            return ExitError;
        }
        return ExitOk;
    }
    if (!exportRunJsonl(*store, runId, outPath, &error)) {
        err() << "autocomp: " << error << Qt::endl;
        return ExitError;
    }
    return ExitOk;
}

int cmdImport(const Args &args)
{
    if (args.positional.size() != 2) {
        err() << "usage: autocomp import ARCHIVE.jsonl|AUTOCOMP_OUTPUT_DIR" << Qt::endl;
        return ExitUsage;
    }
    auto store = openStore(args, cli::StoreUse::Import);
    if (!store)
        return ExitError;
    QString error;
    const QString path = args.positional.at(1);
    const qint64 id = QFileInfo(path).isDir() ? importAutocompDir(*store, path, &error)
                                              : importRunJsonl(*store, path, &error);
    if (!id) {
        err() << "autocomp: " << error << Qt::endl;
        return ExitError;
    }
    out() << "imported as run " << id << '\n';
    return ExitOk;
}

} // namespace autocomp::cli
