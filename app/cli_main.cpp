// `autocomp`: the headless command line of Autocomp Workbench (DESIGN.md §8).
#include "cli_keys.h"
#include "eval/evaluator.h"
#include "model/metric_units.h"
#include "model/repository.h"
#include "model/run_config.h"
#include "search/run_setup.h"
#include "search/search_engine.h"
#include "secrets/secret_store.h"
#include "store/autocomp_dir.h"
#include "store/run_archive.h"
#include "store/run_store.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTextStream>
#include <QThread>

#include <csignal>
#include <cstdio>

using namespace autocomp;

namespace {

enum ExitCode { ExitOk = 0, ExitError = 1, ExitUsage = 2, ExitNotCorrect = 3 };

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

const char *s_usage = R"(usage: autocomp COMMAND [options]

  run CONFIG.yaml [--store PATH] [--json]      run a search; progress on stderr, summary on stdout
  resume RUN_ID [--json]                       continue a paused, stopped or interrupted run
  pause RUN_ID | stop RUN_ID                   ask the process running RUN_ID to pause or stop
  eval --target T --problem P --code FILE [--baseline FILE|--no-baseline] [--json] [--profile]
                                               evaluate one file; prints its result (JSON with --json);
                                               --profile adds the cache profile (evaluation.profile)
  runs [list | show RUN_ID [--candidate ID]] [--json] [--store PATH]
  export RUN_ID --format jsonl|schedule|autocomp-dir --out PATH [--store PATH]
                                               autocomp-dir: an Autocomp-style output directory
  import PATH [--store PATH]                   import a run archive written by `export` (JSONL), or an
                                               Autocomp output directory (candidates-iter-N/, ...)
  targets | problems [TARGET] | agents         what is installed
  keys set PROVIDER | keys list | keys delete PROVIDER
                                               API keys in the OS keychain (`set` reads the key from stdin)

The store is $AUTOCOMP_STORE, else $XDG_DATA_HOME/autocomp-workbench/runs.sqlite.
Exit status: 0 success, 1 error, 2 usage, 3 evaluated but not correct / run failed.
)";

struct Args {
    QStringList positional;
    QHash<QString, QString> options;
    QSet<QString> flags;

    QString option(const QString &name, const QString &fallback = {}) const { return options.value(name, fallback); }
    bool flag(const QString &name) const { return flags.contains(name); }
};

std::optional<Args> parseArgs(const QStringList &arguments, QString *error)
{
    static const QSet<QString> s_valued{QStringLiteral("--store"), QStringLiteral("--target"), QStringLiteral("--problem"),
                                        QStringLiteral("--code"), QStringLiteral("--format"), QStringLiteral("--out"),
                                        QStringLiteral("--candidate"), QStringLiteral("--label")};
    static const QSet<QString> s_flags{QStringLiteral("--json"), QStringLiteral("--help"), QStringLiteral("--profile"),
                                       QStringLiteral("--no-baseline"), QStringLiteral("--version")};
    Args args;
    for (qsizetype i = 0; i < arguments.size(); ++i) {
        const QString &a = arguments.at(i);
        if (s_valued.contains(a)) {
            if (i + 1 >= arguments.size()) {
                *error = QStringLiteral("option %1 needs a value").arg(a);
                return std::nullopt;
            }
            args.options.insert(a, arguments.at(++i));
        } else if (s_flags.contains(a)) {
            args.flags.insert(a);
        } else if (a.startsWith(QLatin1String("--"))) {
            *error = QStringLiteral("unknown option %1").arg(a);
            return std::nullopt;
        } else {
            args.positional << a;
        }
    }
    return args;
}

QString storePath(const Args &args)
{
    return args.option(QStringLiteral("--store"), RunStore::defaultPath());
}

std::unique_ptr<RunStore> openStore(const Args &args)
{
    QString error;
    auto store = RunStore::open(storePath(args), &error);
    if (!store)
        err() << "autocomp: " << error << Qt::endl;
    return store;
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

int driveEngine(const RunSetup &setup, qint64 resumeRunId, const Args &args)
{
    SearchEngine engine(setup);
    engine.llmClient()->setApiKeyLookup(loadApiKeys(setup.planModels + setup.codeModels, err()));
    QObject::connect(&engine, &SearchEngine::logMessage, [](const QString &message) {
        err() << QDateTime::currentDateTime().toString(QStringLiteral("HH:mm:ss")) << ' ' << SecretStore::redact(message) << Qt::endl;
    });
    RunInfo final;
    QObject::connect(&engine, &SearchEngine::finished, [&final](const RunInfo &run) {
        final = run;
        QCoreApplication::exit(0);
    });
    // A pause ends this process; `autocomp resume` continues the run later.
    QObject::connect(&engine, &SearchEngine::runStateChanged, [&engine, &final](RunState state, const QString &) {
        if (state == RunState::Paused) {
            final = engine.runInfo();
            QCoreApplication::exit(0);
        }
    });
    QString error;
    const bool started = resumeRunId ? engine.resume(resumeRunId, &error) : engine.start(&error);
    if (!started) {
        err() << "autocomp: " << error << Qt::endl;
        return ExitError;
    }
    // Ctrl-C / SIGTERM end the run cleanly as stopped (resumable).
    static SearchEngine *s_engine = nullptr;
    s_engine = &engine;
    auto onSignal = [](int) { QMetaObject::invokeMethod(s_engine, [] { s_engine->stop(QStringLiteral("interrupted by a signal")); }); };
    std::signal(SIGINT, onSignal);
    std::signal(SIGTERM, onSignal);
    if (final.id == 0)
        QCoreApplication::exec();
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);

    if (args.flag(QStringLiteral("--json"))) {
        printJson(runJson(final));
    } else {
        out() << "run " << final.id << ": " << toString(final.state) << " (" << final.stopReason << ")\n";
        if (final.bestCandidateId)
            out() << "baseline " << final.baselineScore << ' ' << setup.target.metricUnit << ", best " << final.bestScore << ' '
                  << setup.target.metricUnit << " (candidate " << final.bestCandidateId << "), speedup "
                  << QString::number(final.speedup(), 'f', 2) << "x\n";
        out() << final.llmCalls << " LLM calls, " << final.tokensIn << " tokens in, " << final.tokensOut << " tokens out\n";
        out().flush();
    }
    return final.state == RunState::Failed ? ExitNotCorrect : ExitOk;
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
        auto store = openStore(args);
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
    auto store = openStore(args);
    if (!store)
        return ExitError;
    const auto run = store->run(runId);
    if (!run) {
        err() << "autocomp: no run " << runId << " in " << store->path() << Qt::endl;
        return ExitError;
    }
    if (run->state != RunState::Running) {
        err() << "autocomp: run " << runId << " is " << toString(run->state) << ", not running" << Qt::endl;
        return ExitError;
    }
    store->requestState(runId, command);
    // The running engine polls for requests; wait for it to act.
    const RunState wanted = command == QLatin1String("pause") ? RunState::Paused : RunState::Stopped;
    for (int i = 0; i < 600; ++i) {
        QThread::msleep(100);
        if (store->run(runId)->state == wanted) {
            out() << "run " << runId << ' ' << toString(wanted) << '\n';
            return ExitOk;
        }
        if (i == 50 && store->requestedState(runId) == command) {
            // Nobody picked the request up: no process is running this run (it was killed). Record the state.
            RunInfo r = *store->run(runId);
            r.state = wanted;
            r.stopReason = QStringLiteral("%1 requested while no process was running it").arg(command);
            store->updateRun(r);
            store->requestState(runId, {});
            out() << "run " << runId << ' ' << toString(wanted) << " (no process was running it; `autocomp resume " << runId
                  << "` continues it)\n";
            return ExitOk;
        }
    }
    err() << "autocomp: run " << runId << " did not " << command << " within 60 s (in-flight work is still finishing)" << Qt::endl;
    return ExitError;
}

int cmdRun(const Args &args)
{
    if (args.positional.size() != 2) {
        err() << "usage: autocomp run CONFIG.yaml [--store PATH] [--json]" << Qt::endl;
        return ExitUsage;
    }
    const QString configPath = args.positional.at(1);
    QFile file(configPath);
    if (!file.open(QIODevice::ReadOnly)) {
        err() << "autocomp: " << configPath << ": cannot read: " << file.errorString() << Qt::endl;
        return ExitError;
    }
    const QByteArray yaml = file.readAll();
    QStringList errors;
    const auto config = RunConfig::fromYaml(yaml, configPath, &errors);
    Repository repository;
    std::optional<RunSetup> setup;
    if (config)
        setup = prepareRun(*config, yaml, repository, storePath(args), &errors);
    if (!setup) {
        for (const QString &e : errors)
            err() << "autocomp: " << e << Qt::endl;
        return ExitError;
    }
    setup->label = args.option(QStringLiteral("--label"));
    return driveEngine(*setup, 0, args);
}

int cmdEval(const Args &args)
{
    const QString targetName = args.option(QStringLiteral("--target"), QStringLiteral("cpu"));
    const QString problemName = args.option(QStringLiteral("--problem"));
    const QString codePath = args.option(QStringLiteral("--code"));
    if (problemName.isEmpty() || codePath.isEmpty()) {
        err() << "usage: autocomp eval --target T --problem P --code FILE [--baseline FILE|--no-baseline] [--json] [--profile]" << Qt::endl;
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
    QFile file(codePath);
    if (!file.open(QIODevice::ReadOnly)) {
        err() << "autocomp: " << codePath << ": cannot read: " << file.errorString() << Qt::endl;
        return ExitError;
    }
    EvaluationConfig config;
    config.profile = args.flag(QStringLiteral("--profile"));
    Evaluator evaluator(config);
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
    EvalJob *job = evaluator.evaluate(*target, *problem, QString::fromUtf8(file.readAll()), baseline);
    QObject::connect(job, &EvalJob::statusChanged, [](CandidateStatus status) { err() << "autocomp: " << toString(status) << Qt::endl; });
    QObject::connect(job, &EvalJob::finished, [&result](const EvalResult &r) {
        result = r;
        QCoreApplication::exit(0);
    });
    QCoreApplication::exec();

    QJsonArray steps;
    for (const StepResult &s : result.steps)
        steps.append(QJsonObject{{QStringLiteral("name"), s.name},
                                 {QStringLiteral("exit_code"), s.exitCode},
                                 {QStringLiteral("timed_out"), s.timedOut},
                                 {QStringLiteral("duration_ms"), s.durationMs}});
    if (args.flag(QStringLiteral("--json"))) {
        printJson({{QStringLiteral("status"), result.status},
                   {QStringLiteral("correct"), result.correct},
                   {QStringLiteral("metrics"), result.metrics},
                   {QStringLiteral("feedback"), QJsonArray::fromStringList(result.feedback)},
                   {QStringLiteral("flags"), QJsonArray::fromStringList(result.flags)},
                   {QStringLiteral("log"), result.log},
                   {QStringLiteral("steps"), steps}});
    } else {
        out() << "status: " << result.status << (result.correct ? " (correct)" : " (not correct)") << '\n';
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
    return result.correct ? ExitOk : ExitNotCorrect;
}

int cmdRuns(const Args &args)
{
    auto store = openStore(args);
    if (!store)
        return ExitError;
    const QString sub = args.positional.value(1, QStringLiteral("list"));
    const bool json = args.flag(QStringLiteral("--json"));
    if (sub == QLatin1String("list")) {
        const QList<RunInfo> runs = store->runs();
        if (json) {
            QJsonArray array;
            for (const RunInfo &r : runs)
                array.append(runJson(r));
            out() << QString::fromUtf8(QJsonDocument(array).toJson(QJsonDocument::Indented));
        } else {
            out() << QStringLiteral("%1  %2  %3  %4  %5  %6\n")
                         .arg(QStringLiteral("id"), 5)
                         .arg(QStringLiteral("target"), -8)
                         .arg(QStringLiteral("problem"), -12)
                         .arg(QStringLiteral("state"), -9)
                         .arg(QStringLiteral("speedup"), 8)
                         .arg(QStringLiteral("started"));
            for (const RunInfo &r : runs)
                out() << QStringLiteral("%1  %2  %3  %4  %5  %6\n")
                             .arg(r.id, 5)
                             .arg(r.target, -8)
                             .arg(r.problem, -12)
                             .arg(toString(r.state), -9)
                             .arg(r.bestScore > 0 ? QString::number(r.speedup(), 'f', 2) + QLatin1Char('x') : QStringLiteral("-"), 8)
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
                err() << "autocomp: run " << run->id << " has no candidate " << args.option(QStringLiteral("--candidate")) << Qt::endl;
                return ExitError;
            }
            if (json) {
                printJson(candidateJson(*c, true));
            } else {
                out() << "candidate " << c->id << " (" << toString(c->status) << ", parent " << c->parentId << ")\n\n"
                      << "plan:\n" << c->plan << "\n\ncode:\n" << c->code << '\n';
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
            printJson(o);
        } else {
            out() << "run " << run->id << ": " << run->target << '/' << run->problem << ", " << toString(run->state) << " ("
                  << run->stopReason << ")\n";
            for (const Candidate &c : candidates)
                out() << QStringLiteral("  #%1 parent %2 it %3 %4 %5 %6 %7\n")
                             .arg(c.id, 4)
                             .arg(c.parentId, 4)
                             .arg(c.iteration)
                             .arg(toString(c.origin), -6)
                             .arg(toString(c.status), -13)
                             .arg(c.hasScore() ? QString::number(c.score, 'g', 4) : QStringLiteral("-"), 8)
                             .arg(c.inBeam ? QStringLiteral("beam") : QString());
            out().flush();
        }
        return ExitOk;
    }
    err() << "usage: autocomp runs [list | show RUN_ID [--candidate ID]] [--json]" << Qt::endl;
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
    if (format != QLatin1String("jsonl") && format != QLatin1String("schedule") && format != QLatin1String("autocomp-dir")) {
        err() << "autocomp: export format '" << format << "' is not available; use jsonl, schedule or autocomp-dir" << Qt::endl;
        return ExitUsage;
    }
    auto store = openStore(args);
    if (!store)
        return ExitError;
    // Loading the run's target declares its metric's unit (MetricUnits), which the exports write.
    if (const auto run = store->run(runId))
        Repository().target(run->target, nullptr);
    if (format == QLatin1String("schedule")) {
        const auto run = store->run(runId);
        if (!run || run->schedule.isEmpty()) {
            err() << "autocomp: run " << runId << (run ? " has no schedule (no improvement along its best trajectory yet)" : " does not exist")
                  << Qt::endl;
            return ExitError;
        }
        QFile file(outPath);
        if (!file.open(QIODevice::WriteOnly)) {
            err() << "autocomp: " << outPath << ": cannot write: " << file.errorString() << Qt::endl;
            return ExitError;
        }
        QString text = QStringLiteral("# Schedule of run %1 (%2/%3): the menu items along its best trajectory, in order.\n"
                                      "# Seed a run with it: search: {schedule: %4}\nsource_run: %1\nschedule:\n")
                           .arg(runId)
                           .arg(run->target, run->problem, outPath);
        for (const QString &item : run->schedule)
            text += QStringLiteral("  - \"%1\"\n").arg(QString(item).replace(QLatin1Char('\\'), QStringLiteral("\\\\")).replace(QLatin1Char('"'), QStringLiteral("\\\"")));
        file.write(text.toUtf8());
        return ExitOk;
    }
    QString error;
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
    auto store = openStore(args);
    if (!store)
        return ExitError;
    QString error;
    const QString path = args.positional.at(1);
    const qint64 id = QFileInfo(path).isDir() ? importAutocompDir(*store, path, &error) : importRunJsonl(*store, path, &error);
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
            out() << name << (missing.isEmpty() ? QStringLiteral("  available") : QStringLiteral("  absent")) << "  " << t->description
                  << "  [metric " << t->metric << ", " << t->metricUnit << "]\n";
            if (!missing.isEmpty())
                out() << "    missing: " << missing.join(QLatin1String(", ")) << '\n';
            if (!t->requires_.isEmpty())
                out() << "    needs: " << t->requires_ << '\n';
        }
    } else if (what == QLatin1String("problems")) {
        const QStringList targets = args.positional.size() > 1 ? QStringList{args.positional.at(1)} : repository.targetNames();
        for (const QString &t : targets)
            for (const QString &p : repository.problemNames(t))
                out() << t << '/' << p << '\n';
    } else {
        for (const QString &name : repository.agentNames())
            out() << name << '\n';
    }
    out().flush();
    return ExitOk;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("autocomp"));
    QCoreApplication::setApplicationVersion(QStringLiteral(AUTOCOMP_VERSION));
    QString error;
    const auto args = parseArgs(QCoreApplication::arguments().mid(1), &error);
    if (!args) {
        err() << "autocomp: " << error << "\n\n" << s_usage;
        return ExitUsage;
    }
    if (args->flag(QStringLiteral("--version"))) {
        out() << "autocomp " << AUTOCOMP_VERSION << '\n';
        return ExitOk;
    }
    if (args->positional.isEmpty() || args->flag(QStringLiteral("--help"))) {
        (args->flag(QStringLiteral("--help")) ? out() : err()) << s_usage;
        return args->flag(QStringLiteral("--help")) ? ExitOk : ExitUsage;
    }
    const QString command = args->positional.first();
    if (command == QLatin1String("run"))
        return cmdRun(*args);
    if (command == QLatin1String("resume"))
        return cmdResume(*args);
    if (command == QLatin1String("pause") || command == QLatin1String("stop"))
        return cmdControl(*args);
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
    if (command == QLatin1String("targets") || command == QLatin1String("problems") || command == QLatin1String("agents"))
        return cmdList(*args);
    if (command == QLatin1String("version")) {
        out() << "autocomp " << AUTOCOMP_VERSION << '\n';
        return ExitOk;
    }
    err() << "autocomp: unknown command '" << command << "'\n\n" << s_usage;
    return ExitUsage;
}
