// `autocomp targets`, `problems` and `agents` as lists, `problems import` and `targets check`.
#include "cli_commands.h"
#include "cli_common.h"
#include "cli_targets_check.h"

#include "catalog/kernelbench_import.h"
#include "catalog/repository.h"

namespace autocomp::cli {

namespace {

int cmdImportProblems(const Args &args)
{
    const QStringList paths = args.positional.mid(2);
    if (paths.isEmpty()) {
        err() << "usage: autocomp problems import PATH... [--level N] [--scale F] [--device cpu|cuda]" << Qt::endl;
        return ExitUsage;
    }
    KernelBenchImportOptions options;
    bool ok = true;
    if (const QString level = args.option(QStringLiteral("--level")); !level.isEmpty()) {
        options.level = level.toInt(&ok);
        if (!ok || options.level < 0 || options.level > 9) {
            err() << "autocomp: --level: '" << level << "' is not a level 0..9" << Qt::endl;
            return ExitUsage;
        }
    }
    if (const QString scale = args.option(QStringLiteral("--scale")); !scale.isEmpty()) {
        options.scale = scale.toDouble(&ok);
        if (!ok || !(options.scale > 0 && options.scale <= 1)) {
            err() << "autocomp: --scale: '" << scale << "' is not a factor in (0, 1]" << Qt::endl;
            return ExitUsage;
        }
    }
    options.device = args.option(QStringLiteral("--device"));
    if (!options.device.isEmpty() && options.device != QLatin1String("cpu")
        && options.device != QLatin1String("cuda")) {
        err() << "autocomp: --device: '" << options.device << "' is not cpu or cuda" << Qt::endl;
        return ExitUsage;
    }
    QStringList notFound;
    const QStringList files = kernelBenchFiles(paths, &notFound);
    for (const QString &path : notFound)
        err() << "autocomp: " << path << ": no such file or folder" << Qt::endl;
    if (files.isEmpty()) {
        err() << "autocomp: no KernelBench problem files (class Model, get_inputs, get_init_inputs) under "
              << paths.join(QLatin1String(", ")) << Qt::endl;
        return ExitError;
    }
    err() << "autocomp: importing " << files.size() << " file(s); measuring each reference to pick its scale"
          << Qt::endl;
    Repository repository;
    QString error;
    const auto imported = importKernelBench(
        repository, files, options, [](const QString &line) { err() << "autocomp: " << line << Qt::endl; }, &error);
    int done = 0;
    for (const KernelBenchImported &item : imported) {
        if (item.error.isEmpty()) {
            out() << item.id << '\n';
            ++done;
        }
    }
    out().flush();
    if (!error.isEmpty()) {
        err() << "autocomp: " << error << Qt::endl;
        return ExitError;
    }
    err() << "autocomp: imported " << done << " of " << files.size() << " problem(s) for target kernelbench"
          << (done ? QStringLiteral("; `autocomp eval --target kernelbench --problem ID --start` evaluates one")
                   : QString())
          << Qt::endl;
    return done == files.size() && notFound.isEmpty() ? ExitOk : ExitError;
}

} // namespace

int cmdList(const Args &args)
{
    Repository repository;
    const QString what = args.positional.at(0);
    QStringList names;
    if (what == QLatin1String("targets")) {
        // Each target's state: available, absent (with the programs it lacks) or invalid.
        for (const QString &name : repository.targetNames()) {
            QString error;
            const auto t = repository.target(name, &error);
            if (!t) {
                out() << name << "  invalid: " << error << '\n';
                continue;
            }
            const QStringList missing = t->missingPrograms();
            const QString absent = t->absenceReason();
            const QString noHardware = absent.isEmpty() ? t->hardwareAbsence() : QString();
            out() << name
                  << (absent.isEmpty()
                          ? (noHardware.isEmpty() ? QStringLiteral("  available") : QStringLiteral("  compile only"))
                          : QStringLiteral("  absent"))
                  << "  " << t->description << "  [metric " << t->metric << ", " << t->metricUnit << "]\n";
            if (!missing.isEmpty())
                out() << "    missing: " << missing.join(QLatin1String(", ")) << '\n';
            else if (!absent.isEmpty())
                out() << "    absent: " << absent << '\n';
            if (!noHardware.isEmpty())
                out() << "    no hardware: " << noHardware
                      << " (the steps that need it are left out: evaluations end with the status no_hardware)\n";
            if (!t->requires_.isEmpty())
                out() << "    needs: " << t->requires_ << '\n';
            // Where its tools were found, when that is outside the system's folders (on the steps' PATH and
            // shown in the sandbox), and which were not found at all.
            const QStringList tools = t->toolNotes();
            if (!tools.isEmpty())
                out() << "    tools: " << tools.join(QLatin1String("; ")) << '\n';
        }
    } else if (what == QLatin1String("problems") && args.positional.value(1) == QLatin1String("import")) {
        return cmdImportProblems(args);
    } else if (what == QLatin1String("problems")) {
        const QStringList targets = args.positional.size() > 1 ? QStringList{args.positional.at(1)}
                                                               : repository.targetNames();
        for (const QString &t : targets)
            for (const QString &p : repository.problemNames(t))
                out() << t << '/' << p << '\n';
    } else {
        // Each agent is loaded as a run would load it: one that fails is listed as broken, with the
        // loader's message (the file and line), as `targets` lists an invalid target.
        for (const QString &name : repository.agentNames()) {
            QString error;
            if (repository.agent(name, &error))
                out() << name << '\n';
            else
                out() << name << "  broken: " << QString(error).replace(QLatin1Char('\n'), QLatin1String("\n    "))
                      << '\n';
        }
    }
    out().flush();
    return ExitOk;
}

int cmdTargetsCheck(const Args &args)
{
    const QString sandbox = args.option(QStringLiteral("--sandbox"), QStringLiteral("auto"));
    if (args.positional.size() != 3
        || !QStringList{QStringLiteral("auto"), QStringLiteral("required"), QStringLiteral("off")}.contains(sandbox)) {
        err() << "usage: autocomp targets check T [--problem P]... [--sandbox auto|required|off]" << Qt::endl;
        return ExitUsage;
    }
    return targetsCheck(args.positional.at(2), args.lists.value(QStringLiteral("--problem")), sandbox, out(), err());
}

} // namespace autocomp::cli
