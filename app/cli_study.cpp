#include "cli_study.h"

#include "cli_keys.h"
#include "cli_run_control.h"
#include "llm/llm_client.h"
#include "llm/price_table.h"
#include "catalog/repository.h"
#include "search/run_manager.h"
#include "search/run_setup.h"
#include "secrets/secret_store.h"
#include "store/run_store.h"
#include "study/study_config.h"
#include "study/study_estimate.h"
#include "study/study_report.h"
#include "study/study_runner.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QSaveFile>

namespace autocomp::cli {

namespace {

bool writeFile(const QString &path, const QString &text, QTextStream &err)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(text.toUtf8()) < 0 || !file.commit()) {
        err << "autocomp: " << path << ": cannot write: " << file.errorString() << Qt::endl;
        return false;
    }
    return true;
}

// Prints the table and writes both CSVs; false when a CSV could not be written.
bool report(RunStore &store, const StudyConfig &study, const QString &csvPath, QTextStream &out, QTextStream &err)
{
    const QList<StudyRunResult> results = StudyReport::results(store, study);
    const QList<StudyPointSummary> points = StudyReport::summarize(results);
    out << "study " << study.name
        << ", per point (runs: ended/planned; figures: means over the seeds, tokens, $ and calls summed):"
        << StudyReport::pointsTable(points, results);
    QString runsPath = csvPath;
    if (runsPath.isEmpty())
        runsPath = QFileInfo(study.filePath).absoluteDir().filePath(study.name + QStringLiteral(".csv"));
    QString pointsPath = runsPath;
    if (pointsPath.endsWith(QLatin1String(".csv"), Qt::CaseInsensitive))
        pointsPath.chop(4);
    pointsPath += QStringLiteral(".points.csv");
    const bool ok = writeFile(runsPath, StudyReport::runsCsv(study.name, results), err)
        && writeFile(pointsPath, StudyReport::pointsCsv(study.name, points), err);
    if (ok)
        out << "\nruns: " << runsPath << " (" << results.size() << " rows)\npoints: " << pointsPath << " ("
            << points.size() << " rows)\n";
    out.flush();
    return ok;
}

} // namespace

int runStudy(const StudyOptions &options, QTextStream &out, QTextStream &err)
{
    QStringList errors;
    auto study = StudyConfig::fromFile(options.studyPath, &errors);
    if (!study) {
        for (const QString &e : std::as_const(errors))
            err << "autocomp: " << e << Qt::endl;
        return 1;
    }
    if (options.parallel > 0)
        study->parallel = options.parallel;

    if (options.reportOnly) {
        auto store = RunStore::open(options.storePath, {.create = false, .allowReadOnly = true}, nullptr);
        if (!store) {
            err << "autocomp: no store at " << options.storePath << Qt::endl;
            return 1;
        }
        return report(*store, *study, options.csvPath, out, err) ? 0 : 1;
    }

    // Every run's setup before anything starts or is estimated: an unknown problem, agent or model stops it all.
    const Repository repository;
    QList<RunSetup> setups;
    bool failed = false;
    for (const StudyRun &run : std::as_const(study->runs)) {
        QStringList runErrors;
        auto setup = prepareRun(run.config, run.configYaml, repository, options.storePath, &runErrors);
        if (!setup) {
            for (const QString &e : std::as_const(runErrors)) {
                const QString message = QStringLiteral("%1: %2: %3").arg(options.studyPath, run.problemName(), e);
                if (!errors.contains(message)) {
                    errors << message;
                    err << "autocomp: " << message << Qt::endl;
                }
            }
            failed = true;
            continue;
        }
        setup->label = run.label;
        setups << *setup;
    }
    if (failed)
        return 1;

    const int points = int(study->points().size());
    out << "study " << study->name << ": " << study->problems.size() << " problem(s) × " << points << " point(s) × "
        << study->seeds.size() << " seed(s) = " << study->runs.size() << " runs\n";
    if (options.dryRun) {
        QString priceSource;
        const PriceTable prices = PriceTable::loadDefault(&priceSource);
        const StudyEstimate e = estimateRuns(setups, prices);
        out << "LLM calls: at most " << e.calls
            << " (every iteration B×N plans, B×N×K code samples, F fixes each; the first "
            << "iteration has one parent, so runs send fewer)\n";
        out << "tokens: about " << e.tokensIn << " in, " << e.tokensOut << " out at most\n";
        out << "cost: at most $" << QString::number(e.usd, 'f', 2);
        if (!priceSource.isEmpty())
            out << " (prices of " << priceSource
                << (prices.asOf().isValid() ? QStringLiteral(", as of ") + prices.asOf().toString(Qt::ISODate)
                                            : QString())
                << ')';
        out << '\n';
        if (!e.unpriced.isEmpty())
            out << "not in the price table (counted as $0): " << e.unpriced.join(QStringLiteral(", ")) << '\n';
        out << "nothing sent (--dry-run)\n";
        out.flush();
        return 0;
    }

    RunManager manager;
    QList<ModelSpec> models;
    for (const RunSetup &setup : std::as_const(setups))
        models << setup.planModels << setup.codeModels;
    manager.llmClient()->setApiKeyLookup(loadApiKeys(models, err));
    if (!study->base.llm.proxy.isEmpty())
        manager.llmClient()->setProxy(study->base.llm.proxy);
    StudyRunner runner(*study, setups, &manager);
    QString error;
    if (!runner.plan(&error)) {
        err << "autocomp: " << error << Qt::endl;
        return 1;
    }
    out << runner.count(StudyRunner::Action::Skip) << " ended before (not run again), "
        << runner.count(StudyRunner::Action::Resume) << " to resume, " << runner.count(StudyRunner::Action::Start)
        << " to start; " << study->parallel << " at once\n";
    out.flush();
    const auto tag = [&](int index) {
        const StudyRun &run = study->runs.at(index);
        return QStringLiteral("%1 %2 seed=%3").arg(run.problemName(), run.point.name()).arg(run.seed);
    };
    QObject::connect(&runner, &StudyRunner::logMessage, [&](int index, qint64 runId, const QString &message) {
        err << QDateTime::currentDateTime().toString(QStringLiteral("HH:mm:ss")) << " [run " << runId << ' '
            << tag(index) << "] " << SecretStore::redact(message) << Qt::endl;
    });
    QObject::connect(&runner, &StudyRunner::runStarted, [&](int index, qint64 runId, bool resumed) {
        err << QDateTime::currentDateTime().toString(QStringLiteral("HH:mm:ss")) << " study: run " << runId << ' '
            << tag(index) << (resumed ? " resumed" : " started") << Qt::endl;
    });
    QObject::connect(&runner, &StudyRunner::runEnded, [&](int index, const RunInfo &run) {
        err << QDateTime::currentDateTime().toString(QStringLiteral("HH:mm:ss")) << " study: run " << run.id << ' '
            << tag(index) << ' ' << toString(run.state) << " (" << run.stopReason.section(QLatin1Char('\n'), 0, 0)
            << ')' << Qt::endl;
    });
    bool done = false;
    QObject::connect(&runner, &StudyRunner::finished, [&done] {
        done = true;
        QCoreApplication::exit(0);
    });
    {
        // Ctrl-C / SIGTERM stop the runs cleanly (resumable); the study's next start goes on.
        const StopOnSignals stopOnSignals([&runner](const QString &reason) { runner.stop(reason); });
        runner.start();
        if (!done) // everything may have ended before (then finished() came at once)
            QCoreApplication::exec();
    }
    for (const auto &[index, message] : runner.startFailures())
        err << "autocomp: " << tag(index) << ": " << message << Qt::endl;

    int exitCode = runner.startFailures().isEmpty() ? 0 : 1;
    {
        auto store = RunStore::open(options.storePath, {.create = false, .allowReadOnly = true}, nullptr);
        if (!store) {
            err << "autocomp: cannot read " << options.storePath << " for the report" << Qt::endl;
            return 1;
        }
        for (const StudyRunResult &r : StudyReport::results(*store, *study)) {
            if (exitCode != 0)
                break;
            if (r.state == QLatin1String("failed"))
                exitCode = RunExitFailed;
            else if (!r.ended())
                exitCode = RunExitStopped;
        }
        if (!report(*store, *study, options.csvPath, out, err))
            return 1;
    }
    if (exitCode == RunExitStopped)
        out << "the study did not end: `autocomp study " << options.studyPath
            << "` again goes on (ended runs are not run again)\n";
    out.flush();
    return exitCode;
}

} // namespace autocomp::cli
