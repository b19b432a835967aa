#include "cli_targets_check.h"

#include "cli_run_control.h"
#include "eval/evaluator.h"
#include "catalog/repository.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QPointer>
#include <QRegularExpression>

#include <memory>

namespace autocomp::cli {

namespace {

struct Row
{
    QString problem;
    QString file; // as the author knows it: the start file's name, checks/<name>, problem.yaml
    QString path; // absolute, for the failure's details
    QString expected;
    QString got;
    double ms = 0;
    bool ok = false;
    bool skipped = false; // not judged here (no hardware to tell incorrect from correct)
    QString details; // why it failed
};

// The lines of a log worth showing under a failed row: those that name a file and line first.
QString excerpt(const QString &log, int lines = 8)
{
    static const QRegularExpression s_fileLine(QStringLiteral(R"([\w./+-]+\.\w+:\d+)"));
    const QStringList all = log.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QStringList picked = all.filter(s_fileLine);
    for (const QString &line : all)
        if (picked.size() < lines && !picked.contains(line))
            picked << line;
    return picked.mid(0, lines).join(QLatin1Char('\n'));
}

QString readFile(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
}

// One evaluation to run: the code of a row's file.
struct Job
{
    Problem problem;
    int row;
    QString code;
};

// The rows of one problem: its start code, then each file of its checks/ folder.
void addProblemRows(const Target &target, const QString &name, const Problem &problem, const QString &noHardware,
                    QList<Row> *rows, QList<Job> *jobs)
{
    const QDir dir(problem.dir);
    *rows << Row{name,
                 dir.relativeFilePath(problem.startFile),
                 problem.startFile,
                 noHardware.isEmpty() ? QStringLiteral("ok") : QStringLiteral("no_hardware"),
                 {},
                 0,
                 false,
                 false,
                 {}};
    *jobs << Job{problem, int(rows->size() - 1), problem.startCode()};
    const QFileInfoList checks = QDir(dir.filePath(QStringLiteral("checks"))).entryInfoList(QDir::Files, QDir::Name);
    for (const QFileInfo &check : checks) {
        const QString file = QStringLiteral("checks/") + check.fileName();
        QString expected;
        if (check.fileName().startsWith(QLatin1String("wrong_")))
            expected = QStringLiteral("incorrect");
        else if (check.fileName().startsWith(QLatin1String("broken_")))
            expected = QStringLiteral("compile_error");
        if (expected.isEmpty() || check.suffix() != target.fileExtension) {
            *rows << Row{name,
                         file,
                         check.absoluteFilePath(),
                         QStringLiteral("wrong_*/broken_*.") + target.fileExtension,
                         QStringLiteral("not run"),
                         0,
                         false,
                         false,
                         QStringLiteral("a check's name is wrong_<what>.%1 (must be incorrect) or broken_<what>.%1 "
                                        "(must be compile_error)")
                             .arg(target.fileExtension)};
            continue;
        }
        *rows << Row{name, file, check.absoluteFilePath(), expected, {}, 0, false, false, {}};
        *jobs << Job{problem, int(rows->size() - 1), readFile(check.absoluteFilePath())};
    }
}

// The table of every row, then each failure with the first lines of its log; the number of failures.
int printTable(const QList<Row> &rows, QTextStream &out)
{
    const QStringList header{QStringLiteral("problem"), QStringLiteral("file"), QStringLiteral("expected"),
                             QStringLiteral("got"),     QStringLiteral("time"), QStringLiteral("result")};
    QList<QStringList> cells;
    for (const Row &r : std::as_const(rows))
        cells << QStringList{r.problem,
                             r.file,
                             r.expected,
                             r.got,
                             r.ms > 0 ? QStringLiteral("%1 s").arg(r.ms / 1000.0, 0, 'f', 1) : QStringLiteral("-"),
                             r.skipped  ? QStringLiteral("skip")
                                 : r.ok ? QStringLiteral("ok")
                                        : QStringLiteral("FAIL")};
    QList<qsizetype> widths;
    for (qsizetype c = 0; c < header.size(); ++c) {
        qsizetype w = header.at(c).size();
        for (const QStringList &line : std::as_const(cells))
            w = qMax(w, line.at(c).size());
        widths << w;
    }
    const auto printLine = [&](const QStringList &line) {
        QString text;
        for (qsizetype c = 0; c < line.size(); ++c)
            text += line.at(c).leftJustified(widths.at(c) + 2);
        out << text.trimmed() << '\n';
    };
    out << '\n';
    printLine(header);
    for (const QStringList &line : std::as_const(cells))
        printLine(line);
    int failures = 0;
    for (const Row &r : std::as_const(rows)) {
        if (r.ok)
            continue;
        ++failures;
        out << "\nFAIL " << r.problem << ' ' << (r.path.isEmpty() ? r.file : r.path) << ": expected " << r.expected
            << ", got " << r.got << '\n';
        if (!r.details.isEmpty())
            out << "    " << QString(r.details).replace(QLatin1Char('\n'), QLatin1String("\n    ")) << '\n';
    }
    return failures;
}

} // namespace

int targetsCheck(const QString &targetName, const QStringList &problems, const QString &sandbox, QTextStream &out,
                 QTextStream &err)
{
    Repository repository;
    QString error;
    const auto target = repository.target(targetName, &error);
    if (!target) {
        err << "autocomp: target '" << targetName << "' is invalid: " << error << Qt::endl;
        return TargetsCheckInvalid;
    }
    // The availability check runs in the sandbox, as the steps will (Target::runCheck).
    QElapsedTimer clock;
    clock.start();
    const QString absent = target->absenceReason();
    if (!absent.isEmpty()) {
        out << targetName << ": absent (" << clock.elapsed() << " ms): " << absent << Qt::endl;
        return TargetsCheckAbsent;
    }
    const QString noHardware = target->hardwareAbsence();
    out << targetName << ": available (" << clock.elapsed() << " ms)"
        << (noHardware.isEmpty()
                ? QString()
                : QStringLiteral("; no hardware: %1 (start code expected no_hardware)").arg(noHardware))
        << Qt::endl;

    QList<Row> rows;
    QList<Job> jobs;
    QStringList names = repository.problemNames(targetName);
    for (const QString &wanted : problems)
        if (!names.contains(wanted)) {
            err << "autocomp: target '" << targetName << "' has no problem '" << wanted
                << "' (it has: " << names.join(QLatin1String(", ")) << ")" << Qt::endl;
            return TargetsCheckInvalid;
        }
    if (!problems.isEmpty())
        names = problems;
    for (const QString &name : std::as_const(names)) {
        QString why;
        const auto problem = repository.problem(targetName, name, &why);
        if (!problem) {
            // The loader's message names problem.yaml and the line.
            rows << Row{name,
                        QStringLiteral("problem.yaml"),
                        {},
                        QStringLiteral("loads"),
                        QStringLiteral("invalid"),
                        0,
                        false,
                        false,
                        why};
            continue;
        }
        addProblemRows(*target, name, *problem, noHardware, &rows, &jobs);
    }

    EvaluationConfig config;
    config.sandbox = sandbox;
    Evaluator evaluator(config);
    if (!evaluator.configurationError().isEmpty()) {
        err << "autocomp: " << evaluator.configurationError() << Qt::endl;
        return TargetsCheckInvalid;
    }
    if (!evaluator.sandboxNote().isEmpty())
        err << "autocomp: WARNING: " << evaluator.sandboxNote() << Qt::endl;
    int pending = 0;
    QList<QPointer<EvalJob>> started;
    for (const Job &job : std::as_const(jobs)) {
        // Each file alone (no baseline): the verdict is the point, not a paired speed.
        EvalJob *evalJob = evaluator.evaluate(*target, job.problem, job.code);
        ++pending;
        started << evalJob;
        const int row = job.row;
        QObject::connect(evalJob, &EvalJob::finished, [&rows, &pending, &out, row](const EvalResult &result) {
            Row &r = rows[row];
            r.got = result.status;
            for (const StepResult &step : result.steps)
                r.ms += step.durationMs;
            r.skipped = r.expected == QLatin1String("incorrect") && result.status == QLatin1String("no_hardware");
            r.ok = r.skipped || (result.status == r.expected && (r.expected != QLatin1String("ok") || result.correct));
            if (!r.ok)
                r.details = excerpt(result.log);
            out << "  " << r.problem << ' ' << r.file << ": " << r.got << Qt::endl;
            if (--pending == 0)
                QCoreApplication::exit(0);
        });
    }
    if (pending > 0) {
        const StopOnSignals stop([&started](const QString &) {
            for (const QPointer<EvalJob> &job : std::as_const(started))
                if (job)
                    job->cancel();
        });
        QCoreApplication::exec();
    }

    const int failures = printTable(rows, out);
    // What a search on the target needs besides its evaluation: a run's agent defaults to the target's name.
    QString agentError;
    if (!repository.agent(targetName, &agentError)) {
        if (!repository.agentNames().contains(targetName))
            out << "\nnote: no agent named '" << targetName << "': a search on this target (autocomp run, the New Run "
                << "dialog) needs agents/" << targetName << "/ or a run whose agent: names another agent for it "
                << "(agents/README.md)" << Qt::endl;
        else
            out << "\nnote: the agent '" << targetName << "' does not load: " << agentError << Qt::endl;
    }
    out << '\n' << targetName << ": " << rows.size() << " checks, " << failures << " failed" << Qt::endl;
    return failures == 0 ? TargetsCheckOk : TargetsCheckFailed;
}

} // namespace autocomp::cli
