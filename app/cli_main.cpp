// `autocomp`: the headless command line of Autocomp Workbench (DESIGN.md §8).
#include "agents/agent_builder.h"
#include "cli_agents_import.h"
#include "cli_keys.h"
#include "cli_run_control.h"
#include "cli_study.h"
#include "cli_targets_check.h"
#include "llm/llm_client.h"
#include "eval/evaluator.h"
#include "catalog/kernelbench_import.h"
#include "model/metric_units.h"
#include "catalog/repository.h"
#include "model/run_config.h"
#include "catalog/target_scaffold.h"
#include "search/run_setup.h"
#include "search/run_manager.h"
#include "search/search_engine.h"
#include "secrets/secret_store.h"
#include "exchange/autocomp_dir.h"
#include "exchange/run_archive.h"
#include "store/run_store.h"
#ifdef AUTOCOMP_HAVE_POPPLER
#include "pdf/poppler_pdf_reader.h"
#endif
#include "store/store_follower.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDateTime>
#include <QEventLoop>
#include <QDeadlineTimer>
#include <QTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPointer>
#include <QTextStream>

#include <cstdio>

using namespace autocomp;

namespace {

enum ExitCode {
    ExitOk = 0,
    ExitError = 1,
    ExitUsage = 2,
    ExitNotCorrect = 3
}; // 4 (stopped or paused): cli::runExitCode

QTextStream &out()
{
    static QTextStream s(stdout);
    return s;
}

QTextStream &err()
{
    static QTextStream s(stderr);
    return s;
}

struct Args
{
    QStringList positional;
    QHash<QString, QString> options;
    QHash<QString, QStringList> lists; // every value of an option given several times
    QSet<QString> flags;

    QString option(const QString &name, const QString &fallback = {}) const { return options.value(name, fallback); }
    bool flag(const QString &name) const { return flags.contains(name); }
};

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

const QList<Command> &commands()
{
    static const QCommandLineOption store = valued(QStringLiteral("store"),
                                                   QStringLiteral("the run store (default: $AUTOCOMP_STORE, else "
                                                                  "$XDG_DATA_HOME/autocomp-workbench/runs.sqlite)"),
                                                   QStringLiteral("PATH"));
    static const QCommandLineOption json = flagOption(QStringLiteral("json"), QStringLiteral("print JSON on stdout"));
    static const QList<Command> s_commands{
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

QString storePath(const Args &args) { return args.option(QStringLiteral("--store"), RunStore::defaultPath()); }

std::unique_ptr<RunStore> openStore(const Args &args, cli::StoreUse use)
{
    // The default store is made on first use; a store named with --store or AUTOCOMP_STORE must exist (except for
    // `run`).
    const bool named = args.options.contains(QStringLiteral("--store"))
        || !qEnvironmentVariableIsEmpty("AUTOCOMP_STORE");
    if (!named && use != cli::StoreUse::Write && !QFileInfo::exists(storePath(args)))
        use = cli::StoreUse::Create;
    return cli::openStore(storePath(args), use, err());
}

// The unit the run's target declares for its metric (backend.yaml `unit:`).
QString runUnit(const RunInfo &r)
{
    QString error;
    if (const auto target = Repository().target(r.target, &error); target && target->metric == r.metric)
        return target->metricUnit;
    return MetricUnits::declared(r.metric);
}

QJsonObject runJson(const RunInfo &r)
{
    const QString unit = runUnit(r);
    QJsonObject o{{QStringLiteral("run_id"), r.id},
                  {QStringLiteral("target"), r.target},
                  {QStringLiteral("problem"), r.problem},
                  {QStringLiteral("agent"), r.agent},
                  {QStringLiteral("state"), toString(r.state)},
                  {QStringLiteral("stop_reason"), r.stopReason},
                  {QStringLiteral("label"), r.label},
                  {QStringLiteral("created_at"), r.createdAt.toString(Qt::ISODate)},
                  {QStringLiteral("iteration"), r.iteration},
                  {QStringLiteral("metric"), r.metric},
                  {QStringLiteral("best_candidate"), r.bestCandidateId},
                  {QStringLiteral("unit"), unit},
                  {QStringLiteral("baseline_score"), r.baselineScore},
                  {QStringLiteral("best_score"), r.bestScore},
                  {QStringLiteral("speedup"), r.speedup()},
                  {QStringLiteral("llm_calls"), r.llmCalls},
                  {QStringLiteral("tokens_in"), r.tokensIn},
                  {QStringLiteral("tokens_out"), r.tokensOut},
                  {QStringLiteral("usd"), r.usd}};
    // The keys of earlier versions, kept where they are true: only for a metric in milliseconds.
    if (unit == QLatin1String("ms")) {
        o.insert(QStringLiteral("baseline_ms"), r.baselineScore);
        o.insert(QStringLiteral("best_ms"), r.bestScore);
    }
    return o;
}

QJsonObject candidateJson(const Candidate &c, bool full)
{
    QJsonObject o{{QStringLiteral("id"), c.id},
                  {QStringLiteral("parent"), c.parentId},
                  {QStringLiteral("iteration"), c.iteration},
                  {QStringLiteral("origin"), toString(c.origin)},
                  {QStringLiteral("status"), toString(c.status)},
                  {QStringLiteral("status_word"), statusWord(c)},
                  {QStringLiteral("menu_item"), c.menuItem},
                  {QStringLiteral("in_beam"), c.inBeam},
                  {QStringLiteral("plan_model"), c.planModel},
                  {QStringLiteral("code_model"), c.codeModel}};
    if (c.hasScore())
        o.insert(QStringLiteral("score"), c.score);
    if (full) {
        o.insert(QStringLiteral("plan"), c.plan);
        o.insert(QStringLiteral("code"), c.code);
        o.insert(QStringLiteral("metrics"), c.metrics);
        o.insert(QStringLiteral("feedback"), QJsonArray::fromStringList(c.feedback));
        o.insert(QStringLiteral("flags"), QJsonArray::fromStringList(c.flags));
        o.insert(QStringLiteral("error"), c.error);
    }
    return o;
}

void printJson(const QJsonObject &o)
{
    out() << QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Indented));
    out().flush();
}

// alreadyEnded: `resume` of a run that had ended before, said as such.
void printSummary(const RunInfo &final, const QString &unit, bool reuseAcrossRuns, const QString &storePath,
                  bool alreadyEnded = false)
{
    // A reason with a log (a machine's failure: the step's whole output) keeps its lines, indented.
    const qsizetype newline = final.stopReason.indexOf(QLatin1Char('\n'));
    if (alreadyEnded)
        out() << "run " << final.id << " already finished (" << toString(final.state) << ": "
              << final.stopReason.left(newline) << ")\n";
    else
        out() << "run " << final.id << ": " << toString(final.state) << " (" << final.stopReason.left(newline) << ")\n";
    if (newline >= 0) {
        const QStringList lines = final.stopReason.mid(newline + 1).split(QLatin1Char('\n'));
        for (const QString &line : lines)
            out() << "    " << line << '\n';
    }
    if (final.bestCandidateId)
        out() << "baseline " << final.baselineScore << ' ' << unit << ", best " << final.bestScore << ' ' << unit
              << " (candidate " << final.bestCandidateId << "), speedup " << QString::number(final.speedup(), 'f', 2)
              << "x\n";
    out() << final.llmCalls << " LLM calls, " << final.tokensIn << " tokens in, " << final.tokensOut << " tokens out\n";
    if (reuseAcrossRuns)
        out() << "answers reused across runs (llm.reuse_answers: across_runs)\n";
    if (auto store = RunStore::open(storePath, {.create = false, .allowReadOnly = true}, nullptr))
        cli::printRunNotes(*store, final, out());
    out().flush();
}

void printSummary(const RunInfo &final, const RunSetup &setup)
{
    printSummary(final, setup.target.metricUnit, setup.config.llm.reuseAcrossRuns, setup.storePath);
}

// Drives one or more runs in this process (RunManager: one LLM client and one set of evaluation slots for
// all). resumeRunIds: 0 starts the setup as a new run.
int driveRuns(const QList<RunSetup> &setups, const QList<qint64> &resumeRunIds, const Args &args)
{
    RunManager manager;
    QList<ModelSpec> models;
    for (const RunSetup &setup : setups)
        models << setup.planModels << setup.codeModels;
    // Keys are read before any run starts, so the first request has one.
    manager.llmClient()->setApiKeyLookup(loadApiKeys(models, err()));
    for (const RunSetup &setup : setups)
        if (!setup.config.llm.proxy.isEmpty()) {
            manager.llmClient()->setProxy(setup.config.llm.proxy); // checked when the configuration was read
            break;
        }
    const bool several = setups.size() > 1;
    QList<SearchEngine *> engines;
    QHash<SearchEngine *, RunInfo> finals;
    for (qsizetype i = 0; i < setups.size(); ++i) {
        SearchEngine *engine = manager.create(setups.at(i));
        QObject::connect(engine, &SearchEngine::logMessage, [engine, several](const QString &message) {
            err() << QDateTime::currentDateTime().toString(QStringLiteral("HH:mm:ss")) << ' '
                  << (several ? QStringLiteral("[run %1] ").arg(engine->runId()) : QString())
                  << SecretStore::redact(message) << Qt::endl;
        });
        // A pause ends this process once no run is left running; `autocomp resume` continues the run later.
        QObject::connect(engine, &SearchEngine::runStateChanged, [engine, &finals](RunState state, const QString &) {
            if (state == RunState::Paused)
                finals[engine] = engine->runInfo();
        });
        engines << engine;
    }
    QObject::connect(&manager, &RunManager::runFinished,
                     [&finals](SearchEngine *engine, const RunInfo &run) { finals[engine] = run; });
    // Runs another process took over while this one was not heard from (stopped past the lease's timeout).
    QHash<SearchEngine *, RunLease> lostTo;
    for (SearchEngine *engine : std::as_const(engines))
        QObject::connect(engine, &SearchEngine::leaseLost,
                         [engine, &lostTo](const RunLease &holder) { lostTo[engine] = holder; });
    QObject::connect(&manager, &RunManager::idle, [] { QCoreApplication::exit(0); });
    int started = 0;
    bool failedToStart = false;
    for (qsizetype i = 0; i < engines.size(); ++i) {
        QString error;
        const qint64 resumeId = resumeRunIds.value(i);
        const bool ok = resumeId ? manager.resume(engines.at(i), resumeId, &error)
                                 : manager.start(engines.at(i), &error);
        if (!ok) {
            err() << "autocomp: " << (several ? QStringLiteral("%1: ").arg(setups.at(i).config.problem) : QString())
                  << error << Qt::endl;
            engines[i] = nullptr;
            failedToStart = true;
            continue;
        }
        ++started;
    }
    if (started == 0)
        return ExitError;
    {
        // Ctrl-C / SIGTERM end the runs cleanly as stopped (resumable).
        const cli::StopOnSignals stopOnSignals([&manager](const QString &reason) { manager.stopAll(reason); });
        if (manager.active() > 0)
            QCoreApplication::exec();
    }

    const bool json = args.flag(QStringLiteral("--json"));
    QJsonArray all;
    // The worst outcome: a run that did not start (1), failed (3), stopped or paused (4), finished (0).
    int exitCode = failedToStart ? ExitError : ExitOk;
    const auto rank = [](int code) {
        return code == ExitError ? 3 : code == cli::RunExitFailed ? 2 : code == cli::RunExitStopped ? 1 : 0;
    };
    for (qsizetype i = 0; i < engines.size(); ++i) {
        SearchEngine *engine = engines.at(i);
        if (!engine)
            continue;
        const RunInfo final = finals.value(engine);
        const auto lost = lostTo.constFind(engine);
        const int code = lost != lostTo.cend() ? int(cli::RunExitStopped) : cli::runExitCode(final);
        if (rank(code) > rank(exitCode))
            exitCode = code;
        if (lost != lostTo.cend()) {
            // The run goes on in the other process: this one says so, and nothing of the run as it knew it.
            const QString holder = lost->held() ? QStringLiteral("pid %1 on %2").arg(lost->pid).arg(lost->host)
                                                : QStringLiteral("another process");
            if (json)
                all.append(QJsonObject{{QStringLiteral("run_id"), final.id},
                                       {QStringLiteral("driven_by"), holder},
                                       {QStringLiteral("driver_pid"), lost->pid},
                                       {QStringLiteral("driver_host"), lost->host},
                                       {QStringLiteral("lease_lost"), true}});
            else
                out() << "run " << final.id << " is driven by " << holder
                      << " now: this process lost the run's lease to it and stopped, writing nothing" << Qt::endl;
            continue;
        }
        if (json)
            all.append(runJson(final));
        else
            printSummary(final, setups.at(i));
    }
    if (json) {
        if (all.size() == 1 && !several)
            printJson(all.first().toObject());
        else {
            out() << QString::fromUtf8(QJsonDocument(all).toJson(QJsonDocument::Indented));
            out().flush();
        }
    }
    return exitCode;
}

int driveEngine(const RunSetup &setup, qint64 resumeRunId, const Args &args)
{
    return driveRuns({setup}, {resumeRunId}, args);
}

int cmdResume(const Args &args)
{
    bool ok = false;
    const qint64 runId = args.positional.value(1).toLongLong(&ok);
    if (!ok) {
        err() << "usage: autocomp resume RUN_ID [--store PATH] [--json]" << Qt::endl;
        return ExitUsage;
    }
    std::optional<RunInfo> run;
    {
        auto store = openStore(args, cli::StoreUse::Write);
        if (!store)
            return ExitError;
        run = store->run(runId);
    }
    if (!run) {
        err() << "autocomp: no run " << runId << " in " << storePath(args) << Qt::endl;
        return ExitError;
    }
    QStringList errors;
    const QString where = QStringLiteral("run %1's stored configuration").arg(runId);
    const auto config = RunConfig::fromYaml(run->configYaml.toUtf8(), where, &errors);
    if (run->state == RunState::Finished || run->state == RunState::Failed) {
        // Nothing to drive (nor its target needed): the run as it ended, with the exit status of that end.
        if (args.flag(QStringLiteral("--json"))) {
            QJsonObject o = runJson(*run);
            o.insert(QStringLiteral("already_finished"), true);
            printJson(o);
        } else {
            printSummary(*run, runUnit(*run), config && config->llm.reuseAcrossRuns, storePath(args), true);
        }
        return cli::runExitCode(*run);
    }
    std::optional<RunSetup> setup;
    if (config)
        setup = prepareRun(*config, run->configYaml.toUtf8(), Repository(), storePath(args), &errors);
    if (!setup) {
        for (const QString &e : errors)
            err() << "autocomp: " << e << Qt::endl;
        return ExitError;
    }
    setup->label = run->label;
    return driveEngine(*setup, runId, args);
}

int cmdControl(const Args &args)
{
    const QString command = args.positional.first();
    bool ok = false;
    const qint64 runId = args.positional.value(1).toLongLong(&ok);
    if (!ok) {
        err() << "usage: autocomp " << command << " RUN_ID [--store PATH]" << Qt::endl;
        return ExitUsage;
    }
    auto store = openStore(args, cli::StoreUse::Write);
    if (!store)
        return ExitError;
    return cli::controlRun(*store, runId, command, out(), err());
}

int cmdRun(const Args &args)
{
    if (args.positional.size() < 2) {
        err() << "usage: autocomp run CONFIG.yaml [CONFIG.yaml ...] [--store PATH] [--json]" << Qt::endl;
        return ExitUsage;
    }
    Repository repository;
    QList<RunSetup> setups;
    bool failed = false;
    for (const QString &configPath : args.positional.mid(1)) {
        QFile file(configPath);
        if (!file.open(QIODevice::ReadOnly)) {
            err() << "autocomp: " << configPath << ": cannot read: " << file.errorString() << Qt::endl;
            failed = true;
            continue;
        }
        const QByteArray yaml = file.readAll();
        QStringList errors;
        const auto config = RunConfig::fromYaml(yaml, configPath, &errors);
        std::optional<RunSetup> setup;
        if (config)
            setup = prepareRun(*config, yaml, repository, storePath(args), &errors);
        if (!setup) {
            for (const QString &e : errors)
                err() << "autocomp: " << e << Qt::endl;
            failed = true;
            continue;
        }
        setup->label = args.option(QStringLiteral("--label"));
        setups << *setup;
    }
    // Nothing starts unless every configuration is valid.
    if (failed)
        return ExitError;
    return driveRuns(setups, QList<qint64>(setups.size(), 0), args);
}

int cmdStudy(const Args &args)
{
    if (args.positional.size() != 2) {
        err() << "usage: autocomp study STUDY.yaml [--store PATH] [--dry-run] [--report] [--csv PATH] [--parallel N]"
              << Qt::endl;
        return ExitUsage;
    }
    cli::StudyOptions options;
    options.studyPath = args.positional.at(1);
    options.storePath = storePath(args);
    options.csvPath = args.option(QStringLiteral("--csv"));
    options.dryRun = args.flag(QStringLiteral("--dry-run"));
    options.reportOnly = args.flag(QStringLiteral("--report"));
    if (args.options.contains(QStringLiteral("--parallel"))) {
        bool ok = false;
        options.parallel = args.option(QStringLiteral("--parallel")).toInt(&ok);
        if (!ok || options.parallel < 1) {
            err() << "autocomp study: --parallel needs a number of runs (1 or more)" << Qt::endl;
            return ExitUsage;
        }
    }
    return cli::runStudy(options, out(), err());
}

int cmdEval(const Args &args)
{
    const QString targetName = args.option(QStringLiteral("--target"), QStringLiteral("cpu"));
    const QString problemName = args.option(QStringLiteral("--problem"));
    const QString codePath = args.option(QStringLiteral("--code"));
    const bool start = args.flag(QStringLiteral("--start"));
    if (problemName.isEmpty() || codePath.isEmpty() == !start) {
        err() << "usage: autocomp eval --target T --problem P (--code FILE | --start) [--baseline FILE|--no-baseline] "
                 "[--json] [--profile] "
                 "[--compile-only]"
              << Qt::endl;
        return ExitUsage;
    }
    Repository repository;
    QString error;
    const auto target = repository.target(targetName, &error);
    const auto problem = target ? repository.problem(targetName, problemName, &error) : std::nullopt;
    if (!problem) {
        err() << "autocomp: " << error << Qt::endl;
        return ExitError;
    }
    // An absent target evaluates nothing (the evaluator would only report the same as an error).
    if (!target->available()) {
        err() << "autocomp: " << target->absenceReason() << Qt::endl;
        return ExitError;
    }
    QString code;
    if (start) {
        code = problem->startCode();
        if (code.isEmpty()) {
            err() << "autocomp: problem '" << problem->name << "' has no start code (" << problem->startFile << ")"
                  << Qt::endl;
            return ExitError;
        }
    } else {
        QFile file(codePath);
        if (!file.open(QIODevice::ReadOnly)) {
            err() << "autocomp: " << codePath << ": cannot read: " << file.errorString() << Qt::endl;
            return ExitError;
        }
        code = QString::fromUtf8(file.readAll());
    }
    EvaluationConfig config;
    config.profile = args.flag(QStringLiteral("--profile"));
    config.compileOnly = args.flag(QStringLiteral("--compile-only"));
    config.sandbox = args.option(QStringLiteral("--sandbox"), config.sandbox);
    if (!QStringList{QStringLiteral("auto"), QStringLiteral("required"), QStringLiteral("off")}.contains(
            config.sandbox)) {
        err() << "autocomp: --sandbox: '" << config.sandbox << "' is not one of auto, required, off" << Qt::endl;
        return ExitUsage;
    }
    Evaluator evaluator(config);
    // Several `autocomp eval` of remote evaluations may run on one host: their benchmarks take turns.
    evaluator.setNodeBenchLock(true);
    if (!evaluator.configurationError().isEmpty()) {
        err() << "autocomp: " << evaluator.configurationError() << Qt::endl;
        return ExitError;
    }
    if (!evaluator.sandboxNote().isEmpty())
        err() << "autocomp: WARNING: " << evaluator.sandboxNote() << "; every result is flagged 'unsandboxed' "
              << "(evaluation.sandbox: required refuses to run like this)" << Qt::endl;
    // The baseline timed beside the candidate (paired ratio): the problem's starting code unless
    // another file is named or none is wanted.
    QString baseline;
    if (!args.flag(QStringLiteral("--no-baseline"))) {
        const QString baselinePath = args.option(QStringLiteral("--baseline"));
        if (baselinePath.isEmpty()) {
            baseline = problem->startCode();
        } else {
            QFile baselineFile(baselinePath);
            if (!baselineFile.open(QIODevice::ReadOnly)) {
                err() << "autocomp: " << baselinePath << ": cannot read: " << baselineFile.errorString() << Qt::endl;
                return ExitError;
            }
            baseline = QString::fromUtf8(baselineFile.readAll());
        }
    }
    EvalResult result;
    if (start && baseline == code)
        baseline.clear(); // the start code timed against itself says nothing
    EvalRequest request;
    request.fromStep = args.option(QStringLiteral("--from-step"));
    request.seedDir = args.option(QStringLiteral("--seed-dir"));
    EvalJob *job = evaluator.evaluate(*target, *problem, code, baseline, nullptr, request);
    // SIGTERM (a remote evaluation cancelled, a Slurm job cancelled) kills the steps before this process ends.
    const cli::StopOnSignals stopOnSignals([job = QPointer<EvalJob>(job)](const QString &) {
        if (job)
            job->cancel();
    });
    QObject::connect(job, &EvalJob::statusChanged,
                     [](CandidateStatus status) { err() << "autocomp: " << toString(status) << Qt::endl; });
    QObject::connect(job, &EvalJob::stepStarted, [](const QString &step, const QString &note) {
        err() << "autocomp: step " << step << (note.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(note))
              << Qt::endl;
    });
    QObject::connect(&evaluator, &Evaluator::logMessage,
                     [](const QString &line) { err() << "autocomp: " << line << Qt::endl; });
    QObject::connect(job, &EvalJob::finished, [&result](const EvalResult &r) {
        result = r;
        QCoreApplication::exit(0);
    });
    QCoreApplication::exec();

    if (args.flag(QStringLiteral("--json"))) {
        printJson(result.toJson());
    } else {
        // `error`: the machine's fault (setup, sandbox, tools), no verdict about the code.
        const bool machine = result.status == QLatin1String("error");
        out() << "status: " << result.status
              << (result.correct ? " (correct)"
                      : machine  ? " (no verdict: a problem of this machine, not of the code)"
                                 : " (not correct)")
              << '\n';
        const double value = result.metricValue(target->metric);
        if (!std::isnan(value))
            out() << target->metric << ": " << QString::number(value, 'g', 12) << ' ' << target->metricUnit << '\n';
        for (const QString &f : result.feedback)
            out() << "feedback: " << f << '\n';
        for (const QString &f : result.flags)
            out() << "flag: " << f << '\n';
        if (!result.correct)
            out() << result.log << '\n';
        out().flush();
    }
    if (result.status == QLatin1String("error"))
        return ExitError;
    return result.correct ? ExitOk : ExitNotCorrect;
}

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

bool hasEnded(RunState state)
{
    return state == RunState::Finished || state == RunState::Failed || state == RunState::Stopped;
}

QString leaseText(const std::optional<RunLease> &lease)
{
    if (!lease)
        return QStringLiteral("no process");
    const QString who = QStringLiteral("pid %1 on %2")
                            .arg(lease->pid)
                            .arg(lease->onThisHost() ? QStringLiteral("this host") : lease->host);
    return lease->alive ? who : QStringLiteral("gone (%1)").arg(who);
}

// `autocomp runs watch RUN_ID`: a line per event of the run as the store shows it, whichever process drives
// it, until it ends; the exit status is the run's (0 finished, 3 failed, 4 stopped, or paused or interrupted
// with no process left to drive it).
constexpr int UndrivenGraceMs = 5000;

int cmdWatch(RunStore &store, const Args &args)
{
    bool ok = false;
    const qint64 runId = args.positional.value(2).toLongLong(&ok);
    std::optional<RunInfo> run = ok ? store.run(runId) : std::nullopt;
    if (!run) {
        err() << "autocomp: no run '" << args.positional.value(2) << "' in " << store.path() << Qt::endl;
        return ExitError;
    }
    const bool json = args.flag(QStringLiteral("--json"));
    const QString unit = runUnit(*run);
    QStringList ignored;
    const auto config = RunConfig::fromYaml(run->configYaml.toUtf8(),
                                            QStringLiteral("run %1's configuration").arg(runId), &ignored);
    const int iterations = config ? config->search.iterations : 0;
    const auto stamp = [] { return QDateTime::currentDateTime().toString(QStringLiteral("HH:mm:ss")); };
    const auto line = [&](const QString &text, const QJsonObject &o) {
        if (json)
            out() << QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact)) << '\n';
        else
            out() << stamp() << ' ' << text << '\n';
        out().flush();
    };
    const auto runEvent = [&](const RunInfo &r, const QString &event, const std::optional<RunLease> &lease) {
        QJsonObject o = runJson(r);
        o.insert(QStringLiteral("event"), event);
        o.insert(QStringLiteral("driver"), leaseText(lease));
        return o;
    };
    const auto score = [&](double value) { return QStringLiteral("%1 %2").arg(QString::number(value, 'g', 4), unit); };

    std::optional<RunLease> lease = store.lease(runId);
    QHash<qint64, CandidateStatus> known;
    qint64 lastId = 0;
    const QDateTime loadedAt = QDateTime::currentDateTimeUtc();
    for (const Candidate &c : store.candidates(runId)) {
        known.insert(c.id, c.status);
        lastId = std::max(lastId, c.id);
    }
    line(QStringLiteral("run %1: %2/%3, %4, driven by %5, iteration %6/%7, %8 candidates so far")
             .arg(runId)
             .arg(run->target, run->problem, store.displayState(*run), leaseText(lease))
             .arg(run->iteration)
             .arg(iterations)
             .arg(known.size()),
         runEvent(*run, QStringLiteral("watching"), lease));

    // Whether the run has ended for a watcher: over, or left with nobody to drive it.
    const auto verdict = [&](const RunInfo &r, const std::optional<RunLease> &l) -> std::optional<int> {
        const bool driven = l && l->alive;
        if (hasEnded(r.state)) {
            line(QStringLiteral("run %1 %2 (%3)%4")
                     .arg(r.id)
                     .arg(toString(r.state), r.stopReason,
                          r.bestCandidateId ? QStringLiteral(": best %1 vs %2, %3x, candidate %4")
                                                  .arg(score(r.bestScore), score(r.baselineScore),
                                                       QString::number(r.speedup(), 'f', 2))
                                                  .arg(r.bestCandidateId)
                                            : QString()),
                 runEvent(r, QStringLiteral("ended"), l));
            return cli::runExitCode(r);
        }
        if (!driven) {
            line(
                QStringLiteral("run %1 %2 and no process drives it; `autocomp resume %1` continues it")
                    .arg(r.id)
                    .arg(r.state == RunState::Paused ? QStringLiteral("paused") : QStringLiteral("interrupted")),
                runEvent(r, r.state == RunState::Paused ? QStringLiteral("paused") : QStringLiteral("interrupted"), l));
            return cli::RunExitStopped;
        }
        return std::nullopt;
    };
    if (hasEnded(run->state))
        return *verdict(*run, lease);

    StoreFollower follower(store.path());
    QEventLoop loop;
    int exitCode = ExitError;
    RunInfo last = *run;
    // A run left without a driver (paused, interrupted) ends the watch once it stays so for a while: a
    // `resume` started at the same time as the watch takes it over within that time.
    QTimer undriven;
    undriven.setSingleShot(true);
    undriven.setInterval(UndrivenGraceMs);
    QObject::connect(&undriven, &QTimer::timeout, &loop, [&] {
        exitCode = *verdict(last, lease);
        loop.quit();
    });
    const auto check = [&](const RunInfo &r) {
        const bool driven = lease && lease->alive;
        if (hasEnded(r.state)) {
            exitCode = *verdict(r, lease);
            loop.quit();
        } else if (!driven && !undriven.isActive()) {
            undriven.start();
        } else if (driven) {
            undriven.stop();
        }
    };
    check(*run);
    QObject::connect(&follower, &StoreFollower::failed, &loop, [&](const QString &error) {
        err() << "autocomp: " << error << Qt::endl;
        exitCode = ExitError;
        loop.quit();
    });
    QObject::connect(&follower, &StoreFollower::changed, &loop, [&](const StoreChanges &changes) {
        if (changes.removedRuns.contains(runId)) {
            err() << "autocomp: run " << runId << " was deleted" << Qt::endl;
            exitCode = ExitError;
            loop.quit();
            return;
        }
        if (changes.followedRunId == runId) {
            for (const Candidate &c : changes.candidates) {
                const auto before = known.constFind(c.id);
                const bool isNew = before == known.constEnd();
                const bool verdictNow = isFinal(c.status) && (isNew || !isFinal(*before));
                known.insert(c.id, c.status);
                QJsonObject o = candidateJson(c, false);
                if (isNew && !verdictNow) {
                    o.insert(QStringLiteral("event"), QStringLiteral("candidate"));
                    line(QStringLiteral("#%1 new: %2 of #%3, iteration %4%5")
                             .arg(c.id)
                             .arg(toString(c.origin))
                             .arg(c.parentId)
                             .arg(c.iteration)
                             .arg(c.menuItem.isEmpty() ? QString() : QStringLiteral(", ") + c.menuItem),
                         o);
                } else if (verdictNow) {
                    o.insert(QStringLiteral("event"), QStringLiteral("verdict"));
                    QString what = statusWord(c);
                    if (c.status == CandidateStatus::Correct && c.hasScore())
                        what += QLatin1Char(' ') + score(c.score)
                            + (last.baselineScore > 0
                                   ? QStringLiteral(" (%1x)").arg(QString::number(last.baselineScore / c.score, 'f', 2))
                                   : QString());
                    else if (!c.error.isEmpty())
                        what += QStringLiteral(": ") + c.error.section(QLatin1Char('\n'), 0, 0).left(160);
                    line(QStringLiteral("#%1 %2 (%3 of #%4, iteration %5)")
                             .arg(c.id)
                             .arg(what, toString(c.origin))
                             .arg(c.parentId)
                             .arg(c.iteration),
                         o);
                }
            }
        }
        // Plans and edits handed to the driver from a workbench that does not drive the run.
        for (const RunRequest &request : changes.requests) {
            if (request.runId != runId)
                continue;
            QJsonObject o{{QStringLiteral("event"), QStringLiteral("request")},
                          {QStringLiteral("request_id"), request.id},
                          {QStringLiteral("kind"), RunRequest::kindName(request.kind)},
                          {QStringLiteral("parent_id"), request.parentId},
                          {QStringLiteral("state"), RunRequest::stateName(request.state)},
                          {QStringLiteral("from_pid"), request.fromPid},
                          {QStringLiteral("from_host"), request.fromHost}};
            QString text = QStringLiteral("%1 for #%2 from pid %3 on %4: ")
                               .arg(RunRequest::kindName(request.kind))
                               .arg(request.parentId)
                               .arg(request.fromPid)
                               .arg(request.fromHost);
            if (request.state == RunRequest::State::Taken) {
                o.insert(QStringLiteral("candidate_id"), request.candidateId);
                text += QStringLiteral("taken (candidate #%1)").arg(request.candidateId);
            } else if (request.state == RunRequest::State::Refused) {
                o.insert(QStringLiteral("reason"), request.reason);
                text += QStringLiteral("refused: %1").arg(request.reason);
            } else {
                text += QStringLiteral("sent to the driver");
            }
            line(text, o);
        }
        for (const RunSnapshot &snapshot : changes.runs) {
            if (snapshot.run.id != runId)
                continue;
            const RunInfo &r = snapshot.run;
            const bool driverChanged = leaseText(snapshot.lease) != leaseText(lease);
            lease = snapshot.lease;
            if (r.state != last.state && !hasEnded(r.state))
                line(QStringLiteral("run %1 %2%3")
                         .arg(runId)
                         .arg(toString(r.state),
                              r.stopReason.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(r.stopReason)),
                     runEvent(r, QStringLiteral("state"), lease));
            if (driverChanged && lease && lease->alive)
                line(QStringLiteral("run %1 driven by %2").arg(runId).arg(leaseText(lease)),
                     runEvent(r, QStringLiteral("driver"), lease));
            if (r.iteration != last.iteration)
                line(QStringLiteral("iteration %1/%2 done: %3, %4 LLM calls, $%5")
                         .arg(r.iteration)
                         .arg(iterations)
                         .arg(r.bestCandidateId ? QStringLiteral("best %1 (%2x, candidate %3)")
                                                      .arg(score(r.bestScore), QString::number(r.speedup(), 'f', 2))
                                                      .arg(r.bestCandidateId)
                                                : QStringLiteral("no correct candidate yet"))
                         .arg(r.llmCalls)
                         .arg(QString::number(r.usd, 'f', 4)),
                     runEvent(r, QStringLiteral("iteration"), lease));
            last = r;
            check(r);
        }
    });
    follower.follow(runId, loadedAt, lastId);
    loop.exec();
    return exitCode;
}

int cmdRuns(const Args &args)
{
    auto store = openStore(args, cli::StoreUse::Read);
    if (!store)
        return ExitError;
    const QString sub = args.positional.value(1, QStringLiteral("list"));
    const bool json = args.flag(QStringLiteral("--json"));
    if (sub == QLatin1String("list")) {
        const QList<RunInfo> runs = store->runs();
        if (json) {
            QJsonArray array;
            for (const RunInfo &r : runs) {
                QJsonObject o = runJson(r);
                o.insert(QStringLiteral("state"), store->displayState(r));
                array.append(o);
            }
            out() << QString::fromUtf8(QJsonDocument(array).toJson(QJsonDocument::Indented));
        } else {
            out() << QStringLiteral("%1  %2  %3  %4  %5  %6\n")
                         .arg(QStringLiteral("id"), 5)
                         .arg(QStringLiteral("target"), -8)
                         .arg(QStringLiteral("problem"), -12)
                         .arg(QStringLiteral("state"), -11)
                         .arg(QStringLiteral("speedup"), 8)
                         .arg(QStringLiteral("started"));
            for (const RunInfo &r : runs)
                out() << QStringLiteral("%1  %2  %3  %4  %5  %6\n")
                             .arg(r.id, 5)
                             .arg(r.target, -8)
                             .arg(r.problem, -12)
                             .arg(store->displayState(r), -11)
                             .arg(r.bestScore > 0 ? QString::number(r.speedup(), 'f', 2) + QLatin1Char('x')
                                                  : QStringLiteral("-"),
                                  8)
                             .arg(r.createdAt.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm")));
        }
        out().flush();
        return ExitOk;
    }
    if (sub == QLatin1String("show")) {
        bool ok = false;
        const qint64 id = args.positional.value(2).toLongLong(&ok);
        const auto run = ok ? store->run(id) : std::nullopt;
        if (!run) {
            err() << "autocomp: no run '" << args.positional.value(2) << "' in " << store->path() << Qt::endl;
            return ExitError;
        }
        if (args.options.contains(QStringLiteral("--candidate"))) {
            const auto c = store->candidate(args.option(QStringLiteral("--candidate")).toLongLong());
            if (!c || c->runId != run->id) {
                err() << "autocomp: run " << run->id << " has no candidate "
                      << args.option(QStringLiteral("--candidate")) << Qt::endl;
                return ExitError;
            }
            if (json) {
                printJson(candidateJson(*c, true));
            } else {
                out() << "candidate " << c->id << " (" << statusWord(*c) << ", parent " << c->parentId << ")\n\n"
                      << "plan:\n"
                      << c->plan << "\n\ncode:\n"
                      << c->code << '\n';
                if (!c->error.isEmpty())
                    out() << "\nerror:\n" << c->error << '\n';
                out().flush();
            }
            return ExitOk;
        }
        const QList<Candidate> candidates = store->candidates(run->id);
        if (json) {
            QJsonObject o = runJson(*run);
            QJsonArray array;
            for (const Candidate &c : candidates)
                array.append(candidateJson(c, false));
            o.insert(QStringLiteral("candidates"), array);
            o.insert(QStringLiteral("config_yaml"), run->configYaml);
            const QJsonObject notes = cli::runNotesJson(*store, *run);
            for (auto it = notes.begin(); it != notes.end(); ++it)
                o.insert(it.key(), it.value());
            printJson(o);
        } else {
            out() << "run " << run->id << ": " << run->target << '/' << run->problem << ", "
                  << store->displayState(*run) << " (" << run->stopReason << ")\n";
            out() << run->llmCalls << " LLM calls, $" << QString::number(run->usd, 'f', 4) << '\n';
            cli::printRunNotes(*store, *run, out());
            for (const Candidate &c : candidates)
                out() << QStringLiteral("  #%1 parent %2 it %3 %4 %5 %6 %7\n")
                             .arg(c.id, 4)
                             .arg(c.parentId, 4)
                             .arg(c.iteration)
                             .arg(toString(c.origin), -6)
                             .arg(statusWord(c), -15)
                             .arg(c.hasScore() ? QString::number(c.score, 'g', 4) : QStringLiteral("-"), 8)
                             .arg(c.inBeam ? QStringLiteral("beam") : QString());
            out().flush();
        }
        return ExitOk;
    }
    if (sub == QLatin1String("watch"))
        return cmdWatch(*store, args);
    err() << "usage: autocomp runs [list | show RUN_ID [--candidate ID] | watch RUN_ID] [--json]" << Qt::endl;
    return ExitUsage;
}

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
    // Loading the run's target declares its metric's unit (MetricUnits), which the exports write.
    if (const auto run = store->run(runId))
        Repository().target(run->target, nullptr);
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

int cmdAgentsBuild(const Args &args)
{
    AgentBuildOptions options;
    options.name = args.positional.value(2);
    options.sources = args.lists.value(QStringLiteral("--docs"));
    options.scope = args.option(QStringLiteral("--scope"));
    options.model = args.option(QStringLiteral("--model"));
    options.target = args.option(QStringLiteral("--target"));
    options.overwrite = args.flag(QStringLiteral("--overwrite"));
    if (options.name.isEmpty() || options.model.isEmpty()) {
        err() << "autocomp agents build: give a NAME and --model MODEL\nusage: autocomp agents build NAME --docs "
                 "PATH|URL ... --model MODEL\n";
        return ExitUsage;
    }
    if (args.options.contains(QStringLiteral("--budget"))) {
        bool ok = false;
        options.budgetChars = args.option(QStringLiteral("--budget")).toInt(&ok);
        if (!ok) {
            err() << "autocomp agents build: --budget " << args.option(QStringLiteral("--budget"))
                  << ": not a number of characters\n";
            return ExitUsage;
        }
    }
    // Like `run`, a build makes its store when missing: its answers are kept there for a resumed build.
    auto store = openStore(args, cli::StoreUse::Create);
    if (!store)
        return ExitError;
    QString error;
    const std::optional<ModelSpec> spec = ModelSpec::parse(options.model, &error);
    if (!spec) {
        err() << "autocomp agents build: --model " << options.model << ": " << error << '\n';
        return ExitUsage;
    }
    LlmClient client;
    AgentBuilder builder(options, &client, store.get());
    if (!builder.validate(&error)) {
        err() << "autocomp agents build: " << error << '\n';
        return ExitError;
    }
    QEventLoop loop;
    int code = ExitOk;
    // Ctrl-C or SIGTERM: calls already sent are paid for and their answers are kept in the store, so the next
    // build reuses them instead of paying again: the process waits for them (at most 3 minutes); a second
    // signal leaves at once.
    bool cancelling = false;
    QTimer onTheWay;
    onTheWay.setInterval(200);
    QDeadlineTimer giveUp;
    QObject::connect(&onTheWay, &QTimer::timeout, &loop, [&] {
        if (builder.callsOnTheWay() == 0 || giveUp.hasExpired())
            loop.quit();
    });
    QObject::connect(&builder, &AgentBuilder::failed, &loop, [&](const QString &why) {
        err() << "autocomp agents build: " << why << '\n';
        code = ExitError;
        if (cancelling && builder.callsOnTheWay() > 0)
            return; // the timer quits once they are in
        loop.quit();
    });
    QObject::connect(&builder, &AgentBuilder::planReady, &loop, [&] { loop.quit(); });
    builder.collect();
    if (builder.stage() == AgentBuilder::Stage::Collecting)
        loop.exec();
    if (code != ExitOk)
        return code;
    err() << builder.plan().describe(options.model);
    err().flush();
    if (args.flag(QStringLiteral("--dry-run")))
        return ExitOk;
    client.setApiKeyLookup(loadApiKeys({*spec}, err()));
    QObject::connect(&builder, &AgentBuilder::stageChanged, &loop, [](AgentBuilder::Stage stage, int total) {
        if (stage != AgentBuilder::Stage::Failed && stage != AgentBuilder::Stage::Done)
            err() << "[" << AgentBuilder::stageName(stage) << "] " << total << " step(s)\n";
        err().flush();
    });
    QObject::connect(&builder, &AgentBuilder::logLine, &loop, [](const QString &line) {
        err() << "  " << line << '\n';
        err().flush();
    });
    QObject::connect(&builder, &AgentBuilder::finished, &loop, [&](const QString &dir) {
        out() << dir << '\n';
        if (args.options.contains(QStringLiteral("--scaffold-from"))) {
            const QString targetName = options.target.isEmpty() ? options.name : options.target;
            QString scaffoldError;
            const QString backend = TargetScaffold::create(
                Repository(), targetName, args.option(QStringLiteral("--scaffold-from")), &scaffoldError);
            if (backend.isEmpty()) {
                err() << "autocomp agents build: the target scaffold: " << scaffoldError << '\n';
                code = ExitError;
            } else {
                out() << backend << '\n';
            }
        }
        loop.quit();
    });
    const cli::StopOnSignals stopOnSignals([&](const QString &reason) {
        if (cancelling) {
            err() << "autocomp agents build: " << reason << " again: leaving now; " << builder.callsOnTheWay()
                  << " call(s) still on their way will be paid for again by the next build\n";
            code = cli::RunExitStopped;
            loop.quit();
            return;
        }
        cancelling = true;
        giveUp = QDeadlineTimer(180000);
        builder.cancel();
        if (const int left = builder.callsOnTheWay(); left > 0) {
            err()
                << "autocomp agents build: " << reason << ": waiting for " << left
                << " call(s) already sent (paid for: their answers are kept for the next build); again to leave now\n";
            onTheWay.start();
        }
        err().flush();
    });
    builder.build();
    if (builder.stage() != AgentBuilder::Stage::Failed)
        loop.exec();
    err() << QStringLiteral("LLM calls: %1 sent, %2 answered from the store; $%3\n")
                 .arg(builder.callsSent())
                 .arg(builder.callsReused())
                 .arg(builder.usd(), 0, 'f', 4);
    out().flush();
    return code;
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
    if (command == QLatin1String("agents") && args->positional.value(1) == QLatin1String("import")) {
        if (args->positional.size() != 3) {
            err() << "usage: autocomp agents import DIR [--name NAME] [--target T] [--overwrite]" << Qt::endl;
            return ExitUsage;
        }
        return cli::agentsImport(args->positional.at(2), args->option(QStringLiteral("--name")),
                                 args->option(QStringLiteral("--target")), args->flag(QStringLiteral("--overwrite")),
                                 out(), err());
    }
    if (command == QLatin1String("targets") && args->positional.value(1) == QLatin1String("check")) {
        const QString sandbox = args->option(QStringLiteral("--sandbox"), QStringLiteral("auto"));
        if (args->positional.size() != 3
            || !QStringList{QStringLiteral("auto"), QStringLiteral("required"), QStringLiteral("off")}.contains(
                sandbox)) {
            err() << "usage: autocomp targets check T [--problem P]... [--sandbox auto|required|off]" << Qt::endl;
            return ExitUsage;
        }
        return cli::targetsCheck(args->positional.at(2), args->lists.value(QStringLiteral("--problem")), sandbox, out(),
                                 err());
    }
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
