// `autocomp`: the headless command line of Autocomp Workbench (DESIGN.md §8).
#include "cli_commands.h"
#include "cli_common.h"
#include "cli_keys.h"
#ifdef AUTOCOMP_HAVE_POPPLER
#include "pdf/poppler_pdf_reader.h"
#endif

#include <QCommandLineParser>
#include <QCoreApplication>

using namespace autocomp;
using namespace autocomp::cli;

namespace {

// One subcommand: its synopsis (for errors and --help), its options (names without dashes; a value name
// makes an option take a value), and its positional arguments.
struct Command
{
    QString name;
    QString synopsis;
    QString description;
    QList<QCommandLineOption> options;
    QList<std::pair<QString, QString>> positionals; // name, description
};

QCommandLineOption valued(const QString &name, const QString &description, const QString &valueName)
{
    return QCommandLineOption(name, description, valueName);
}

QCommandLineOption flagOption(const QString &name, const QString &description)
{
    return QCommandLineOption(name, description);
}

// The options several commands take.
QCommandLineOption storeOption()
{
    return valued(QStringLiteral("store"),
                  QStringLiteral("the run store (default: $AUTOCOMP_STORE, else "
                                 "$XDG_DATA_HOME/autocomp-workbench/runs.sqlite)"),
                  QStringLiteral("PATH"));
}

QCommandLineOption jsonOption() { return flagOption(QStringLiteral("json"), QStringLiteral("print JSON on stdout")); }

// run, resume, study, pause, stop: cli_run.cpp.
QList<Command> runCommands(const QCommandLineOption &store, const QCommandLineOption &json)
{
    return {
        {QStringLiteral("run"),
         QStringLiteral("run CONFIG.yaml [CONFIG.yaml ...] [--store PATH] [--json] [--label TEXT]"),
         QStringLiteral(
             "Runs searches, several at once in this process when given several configurations (they share the "
             "LLM client and the evaluation slots); progress on stderr, a summary on stdout."),
         {store, json,
          valued(QStringLiteral("label"), QStringLiteral("a label stored with the run"), QStringLiteral("TEXT"))},
         {{QStringLiteral("CONFIG.yaml"), QStringLiteral("run configuration(s)")}}},
        {QStringLiteral("resume"),
         QStringLiteral("resume RUN_ID [--store PATH] [--json]"),
         QStringLiteral("Continues a paused, stopped or interrupted run; paid answers are reused."),
         {store, json},
         {{QStringLiteral("RUN_ID"), QStringLiteral("the run")}}},
        {QStringLiteral("study"),
         QStringLiteral("study STUDY.yaml [--store PATH] [--dry-run] [--report] [--csv PATH] [--parallel N]"),
         QStringLiteral(
             "Runs a parameter study: every problem × point × seed as a labelled run, several at once; started again "
             "it goes on where it stopped (ended runs are not run again). Writes a CSV per run and per point."),
         {store,
          flagOption(QStringLiteral("dry-run"),
                     QStringLiteral("print the number of runs, LLM calls and cost estimate, send nothing")),
          flagOption(QStringLiteral("report"),
                     QStringLiteral("print the report and write the CSVs from the store, run nothing")),
          valued(QStringLiteral("csv"),
                 QStringLiteral("the runs CSV (default STUDY_DIR/NAME.csv; the points CSV beside it, NAME.points.csv)"),
                 QStringLiteral("PATH")),
          valued(QStringLiteral("parallel"), QStringLiteral("runs at once (default: the study's parallel, else 2)"),
                 QStringLiteral("N"))},
         {{QStringLiteral("STUDY.yaml"), QStringLiteral("the study (README, Parameter studies)")}}},
        {QStringLiteral("pause"),
         QStringLiteral("pause RUN_ID [--store PATH]"),
         QStringLiteral("Asks the process driving RUN_ID to pause it."),
         {store},
         {{QStringLiteral("RUN_ID"), QStringLiteral("the run")}}},
        {QStringLiteral("stop"),
         QStringLiteral("stop RUN_ID [--store PATH]"),
         QStringLiteral("Asks the process driving RUN_ID to stop it."),
         {store},
         {{QStringLiteral("RUN_ID"), QStringLiteral("the run")}}},
    };
}

// eval: cli_eval.cpp.
QList<Command> evalCommands(const QCommandLineOption &json)
{
    return {
        {QStringLiteral("eval"),
         QStringLiteral("eval --target T --problem P (--code FILE | --start) [--baseline FILE | --no-baseline] "
                        "[--json] [--profile] [--compile-only] "
                        "[--sandbox auto|required|off]"),
         QStringLiteral("Evaluates one file, or the problem's start code, and prints its result."),
         {valued(QStringLiteral("target"), QStringLiteral("the target (default cpu)"), QStringLiteral("T")),
          valued(QStringLiteral("problem"), QStringLiteral("the problem"), QStringLiteral("P")),
          valued(QStringLiteral("code"), QStringLiteral("the candidate source"), QStringLiteral("FILE")),
          flagOption(QStringLiteral("start"), QStringLiteral("evaluate the problem's start code")),
          flagOption(QStringLiteral("compile-only"),
                     QStringLiteral("leave out the steps that need the target's hardware (evaluation.compile_only)")),
          valued(QStringLiteral("baseline"),
                 QStringLiteral("time against this code (default: the problem's start code)"), QStringLiteral("FILE")),
          flagOption(QStringLiteral("no-baseline"), QStringLiteral("time the candidate alone")), json,
          flagOption(QStringLiteral("profile"), QStringLiteral("add the cache profile (evaluation.profile)")),
          valued(
              QStringLiteral("sandbox"),
              QStringLiteral("auto (default), required (refuse to run without bubblewrap) or off (evaluation.sandbox)"),
              QStringLiteral("MODE")),
          valued(QStringLiteral("from-step"),
                 QStringLiteral("start at this step (the far side of a remote evaluation)"), QStringLiteral("STEP")),
          valued(QStringLiteral("seed-dir"),
                 QStringLiteral("copy this directory's files into the work directory first"), QStringLiteral("DIR"))},
         {}},
    };
}

// runs, export, import: cli_runs.cpp, cli_watch.cpp, cli_exchange.cpp.
QList<Command> storeCommands(const QCommandLineOption &store, const QCommandLineOption &json)
{
    return {
        {QStringLiteral("runs"),
         QStringLiteral("runs [list | show RUN_ID [--candidate ID] | watch RUN_ID] [--json] [--store PATH]"),
         QStringLiteral(
             "Lists the runs of a store, shows one run or one of its candidates, or follows a run as it goes "
             "(whichever process drives it) until it ends."),
         {store, json,
          valued(QStringLiteral("candidate"), QStringLiteral("one candidate of the run"), QStringLiteral("ID"))},
         {{QStringLiteral("list|show|watch"), QStringLiteral("what to print (default list)")},
          {QStringLiteral("RUN_ID"), QStringLiteral("for show")}}},
        {QStringLiteral("export"),
         QStringLiteral("export RUN_ID --format jsonl|schedule|autocomp-dir --out PATH [--store PATH]"),
         QStringLiteral(
             "Writes a run as a JSONL archive, a schedule for a similar problem, or an Autocomp output directory."),
         {store,
          valued(QStringLiteral("format"), QStringLiteral("jsonl (default), schedule or autocomp-dir"),
                 QStringLiteral("FORMAT")),
          valued(QStringLiteral("out"), QStringLiteral("where to write"), QStringLiteral("PATH"))},
         {{QStringLiteral("RUN_ID"), QStringLiteral("the run")}}},
        {QStringLiteral("import"),
         QStringLiteral("import PATH [--store PATH]"),
         QStringLiteral("Imports a run archive written by `export` (JSONL) or an Autocomp output directory."),
         {store},
         {{QStringLiteral("PATH"), QStringLiteral("archive or directory")}}},
    };
}

// targets, problems, agents, keys, version: cli_catalog.cpp, cli_agents.cpp, cli_keys.cpp.
QList<Command> catalogCommands(const QCommandLineOption &store)
{
    return {
        {QStringLiteral("targets"),
         QStringLiteral("targets [check T [--problem P]... [--sandbox auto|required|off]]"),
         QStringLiteral(
             "Lists the installed targets; `check` runs a target's availability check, then evaluates every problem's "
             "start "
             "code and its checks/ files (wrong_* must be incorrect, broken_* compile_error) and prints a table. "
             "Exit status: 0 all ok, 1 the target does not load, 3 a check failed, 5 the target is absent here."),
         {valued(QStringLiteral("problem"), QStringLiteral("check: only this problem (repeatable)"),
                 QStringLiteral("P")),
          valued(QStringLiteral("sandbox"),
                 QStringLiteral("check: auto (default), required or off (evaluation.sandbox)"),
                 QStringLiteral("MODE"))},
         {{QStringLiteral("check"), QStringLiteral("check a target")},
          {QStringLiteral("T"), QStringLiteral("the target to check")}}},
        {QStringLiteral("problems"),
         QStringLiteral("problems [TARGET] | problems import PATH... [--level N] [--scale F] [--device cpu|cuda]"),
         QStringLiteral(
             "Lists the problems of every target, or of one; `import` makes kernelbench problems of KernelBench "
             "problem "
             "files (a file or a folder of them), refers to the files as they are, and prints the problem ids."),
         {valued(QStringLiteral("level"),
                 QStringLiteral("import: the KernelBench level (default: from a levelN folder in the path)"),
                 QStringLiteral("N")),
          valued(QStringLiteral("scale"),
                 QStringLiteral("import: the factor for the file's module-level sizes (default: picked so one "
                                "reference pass takes about 50 ms here)"),
                 QStringLiteral("F")),
          valued(QStringLiteral("device"),
                 QStringLiteral("import: the device the scale is picked for (default: the target's setting)"),
                 QStringLiteral("D"))},
         {{QStringLiteral("TARGET|import"), QStringLiteral("one target, or import")},
          {QStringLiteral("PATH"), QStringLiteral("for import")}}},
        {QStringLiteral("agents"),
         QStringLiteral(
             "agents [build NAME --docs PATH|URL ... --model MODEL [--scope TEXT] [--target T] [--budget CHARS] "
             "[--overwrite] [--dry-run] [--store PATH] | import DIR [--name NAME] [--target T] [--overwrite]]"),
         QStringLiteral(
             "Lists the installed agents, or builds one from documents (folders of text, markdown and HTML, PDFs, "
             "web pages under a URL) into your data directory; `import` copies an agent folder (Autocomp's "
             "format as its agent builder writes it, or ours) into your data directory after checking every file."),
         {store,
          valued(QStringLiteral("docs"), QStringLiteral("a folder, file or URL to read (repeatable)"),
                 QStringLiteral("PATH|URL")),
          valued(QStringLiteral("model"), QStringLiteral("the model that reads them (provider::model)"),
                 QStringLiteral("MODEL")),
          valued(QStringLiteral("scope"), QStringLiteral("what the agent is for; documents outside it are left out"),
                 QStringLiteral("TEXT")),
          valued(QStringLiteral("target"),
                 QStringLiteral("the target the agent is for (recorded in agent_config.yaml)"), QStringLiteral("T")),
          valued(QStringLiteral("budget"), QStringLiteral("characters one file's reduce step reads (default 150000)"),
                 QStringLiteral("CHARS")),
          valued(QStringLiteral("scaffold-from"),
                 QStringLiteral("also copy this target's backend.yaml and first problem as a start for the new target "
                                "(named by --target, else NAME)"),
                 QStringLiteral("T")),
          flagOption(QStringLiteral("overwrite"),
                     QStringLiteral("replace an agent of that name you built or imported before")),
          valued(QStringLiteral("name"),
                 QStringLiteral("import: the name to install it under (default: its agent_name)"),
                 QStringLiteral("NAME")),
          flagOption(QStringLiteral("dry-run"), QStringLiteral("print the plan and the cost estimate, send nothing"))},
         {{QStringLiteral("build"), QStringLiteral("build an agent")},
          {QStringLiteral("NAME"), QStringLiteral("the agent's name")}}},
        {QStringLiteral("keys"),
         QStringLiteral("keys set PROVIDER | keys list | keys delete PROVIDER"),
         QStringLiteral("API keys in the OS keychain; `set` reads the key from stdin."),
         {},
         {{QStringLiteral("set|list|delete"), QStringLiteral("what to do")},
          {QStringLiteral("PROVIDER"), QStringLiteral("for set and delete")}}},
        {QStringLiteral("version"), QStringLiteral("version"), QStringLiteral("Prints the version."), {}, {}},
    };
}

// Every command, in the order of the usage text.
const QList<Command> &commands()
{
    static const QList<Command> s_commands = [] {
        const QCommandLineOption store = storeOption();
        const QCommandLineOption json = jsonOption();
        return runCommands(store, json) + evalCommands(json) + storeCommands(store, json) + catalogCommands(store);
    }();
    return s_commands;
}

QString usage()
{
    QString text = QStringLiteral(
        "usage: autocomp COMMAND [options]   (autocomp COMMAND --help for a command's options)\n\n");
    for (const Command &c : commands())
        text += QStringLiteral("  %1\n      %2\n").arg(c.synopsis, c.description);
    text += QStringLiteral(
        "\nThe store is $AUTOCOMP_STORE, else $XDG_DATA_HOME/autocomp-workbench/runs.sqlite.\n"
        "Exit status: 0 success (a run: finished with at least one evaluated candidate), 1 error, 2 usage,\n"
        "3 evaluated but not correct / run failed (every LLM call failed, or the starting code is wrong),\n"
        "4 run stopped or paused (`autocomp resume RUN_ID` continues it), or taken over by another process.\n"
        "With several runs, the worst. `resume` of a run that has ended reports it: 0 finished, 3 failed.\n");
    return text;
}

enum class Parsed { Run, Exit };

// Parses with QCommandLineParser: the command first, then that command's own options. On --help,
// --version and errors it prints and sets *exitCode.
Parsed parseArgs(const QStringList &arguments, Args *args, int *exitCode)
{
    QCommandLineParser first;
    first.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
    const QCommandLineOption help = first.addHelpOption();
    const QCommandLineOption version = first.addVersionOption();
    first.addPositionalArgument(QStringLiteral("command"), QStringLiteral("what to do"));
    first.parse(arguments); // errors are the command's parser's to report
    const QString name = first.positionalArguments().value(0);
    if (name.isEmpty()) {
        if (first.isSet(version)) {
            out() << "autocomp " << AUTOCOMP_VERSION << '\n';
            *exitCode = ExitOk;
        } else if (first.isSet(help)) {
            out() << usage();
            *exitCode = ExitOk;
        } else {
            const QStringList unknown = first.unknownOptionNames();
            err() << "autocomp: " << (unknown.isEmpty() ? QStringLiteral("no command given") : first.errorText())
                  << "\n\n"
                  << usage();
            *exitCode = ExitUsage;
        }
        return Parsed::Exit;
    }
    const auto command = std::find_if(commands().begin(), commands().end(),
                                      [&](const Command &c) { return c.name == name; });
    if (command == commands().end()) {
        err() << "autocomp: unknown command '" << name << "'\n\n" << usage();
        *exitCode = ExitUsage;
        return Parsed::Exit;
    }
    QCommandLineParser parser;
    parser.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
    parser.setApplicationDescription(command->description);
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addOptions(command->options);
    parser.addPositionalArgument(command->name, QStringLiteral("the command"), command->name);
    for (const auto &[positional, description] : command->positionals)
        parser.addPositionalArgument(positional, description);
    if (!parser.parse(arguments)) {
        err() << "autocomp " << command->name << ": " << parser.errorText() << "\nusage: autocomp " << command->synopsis
              << '\n';
        *exitCode = ExitUsage;
        return Parsed::Exit;
    }
    if (parser.isSet(QStringLiteral("help"))) {
        out() << parser.helpText().replace(QStringLiteral("Usage: ") + arguments.value(0),
                                           QStringLiteral("Usage: autocomp"));
        *exitCode = ExitOk;
        return Parsed::Exit;
    }
    if (parser.isSet(QStringLiteral("version"))) {
        out() << "autocomp " << AUTOCOMP_VERSION << '\n';
        *exitCode = ExitOk;
        return Parsed::Exit;
    }
    args->positional = parser.positionalArguments();
    for (const QCommandLineOption &option : command->options) {
        const QString optionName = option.names().constFirst();
        if (!parser.isSet(option))
            continue;
        if (option.valueName().isEmpty())
            args->flags.insert(QStringLiteral("--") + optionName);
        else {
            args->options.insert(QStringLiteral("--") + optionName, parser.value(option));
            args->lists.insert(QStringLiteral("--") + optionName, parser.values(option));
        }
    }
    return Parsed::Run;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("autocomp"));
    QCoreApplication::setApplicationVersion(QStringLiteral(AUTOCOMP_VERSION));
#ifdef AUTOCOMP_HAVE_POPPLER
    PopplerPdfReader::install();
#endif
    Args parsed;
    int exitCode = ExitOk;
    if (parseArgs(QCoreApplication::arguments(), &parsed, &exitCode) == Parsed::Exit)
        return exitCode;
    const Args *args = &parsed;
    const QString command = args->positional.first();
    if (command == QLatin1String("run"))
        return cmdRun(*args);
    if (command == QLatin1String("resume"))
        return cmdResume(*args);
    if (command == QLatin1String("pause") || command == QLatin1String("stop"))
        return cmdControl(*args);
    if (command == QLatin1String("study"))
        return cmdStudy(*args);
    if (command == QLatin1String("eval"))
        return cmdEval(*args);
    if (command == QLatin1String("runs"))
        return cmdRuns(*args);
    if (command == QLatin1String("export"))
        return cmdExport(*args);
    if (command == QLatin1String("import"))
        return cmdImport(*args);
    if (command == QLatin1String("keys"))
        return cmdKeys(args->positional);
    if (command == QLatin1String("agents") && args->positional.value(1) == QLatin1String("build"))
        return cmdAgentsBuild(*args);
    if (command == QLatin1String("agents") && args->positional.value(1) == QLatin1String("import"))
        return cmdAgentsImport(*args);
    if (command == QLatin1String("targets") && args->positional.value(1) == QLatin1String("check"))
        return cmdTargetsCheck(*args);
    if (command == QLatin1String("targets") || command == QLatin1String("problems")
        || command == QLatin1String("agents"))
        return cmdList(*args);
    if (command == QLatin1String("version")) {
        out() << "autocomp " << AUTOCOMP_VERSION << '\n';
        return ExitOk;
    }
    err() << "autocomp: unknown command '" << command << "'\n\n" << usage();
    return ExitUsage;
}
