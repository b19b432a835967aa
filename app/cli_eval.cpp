// `autocomp eval`: one evaluation in this process.
#include "cli_commands.h"
#include "cli_common.h"
#include "cli_run_control.h"

#include "catalog/repository.h"
#include "eval/evaluator.h"

#include <QCoreApplication>
#include <QJsonObject>
#include <QFile>
#include <QPointer>

#include <cmath>
#include <optional>

namespace autocomp::cli {

namespace {

// The text of a candidate or baseline file; nullopt after a message on err() when it cannot be read.
std::optional<QString> readSource(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        err() << "autocomp: " << path << ": cannot read: " << file.errorString() << Qt::endl;
        return std::nullopt;
    }
    return QString::fromUtf8(file.readAll());
}

} // namespace

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
        const std::optional<QString> text = readSource(codePath);
        if (!text)
            return ExitError;
        code = *text;
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
            const std::optional<QString> text = readSource(baselinePath);
            if (!text)
                return ExitError;
            baseline = *text;
        }
    }
    EvalResult result;
    if (!baseline.isEmpty() && baseline == code) {
        // The evaluator times identical text alone. With --start that is what is meant; with --code it is
        // said, since an A/A measurement of the noise needs the copy to differ (README, "Noise is not crowned").
        if (!start)
            err() << "autocomp: the code is the baseline's, character for character: it is timed alone, without a "
                     "paired ratio (to time the same code against itself, add a comment line to the copy)"
                  << Qt::endl;
        baseline.clear();
    }
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
        // Timed beside a baseline: the ratio is the figure a search ranks by (the start code's score times it). The
        // absolute median above is this evaluation's alone, and on a shared machine it can disagree with the ratio.
        const QJsonObject paired = result.metrics.value(QStringLiteral("paired_ratio")).toObject();
        if (const double ratio = paired.value(QStringLiteral("value")).toDouble(); result.correct && ratio > 0) {
            out() << "paired_ratio: " << QString::number(ratio, 'g', 4) << "x the baseline's time";
            const double low = paired.value(QStringLiteral("ci_low")).toDouble();
            const double high = paired.value(QStringLiteral("ci_high")).toDouble();
            if (low > 0 && high >= low)
                out() << " (95% interval " << QString::number(low, 'g', 4) << '-' << QString::number(high, 'g', 4)
                      << ')';
            out() << ", a speedup of " << QString::number(1.0 / ratio, 'g', 3)
                  << "x; a search scores it as the start code's " << target->metric << " times this ratio" << '\n';
        }
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

} // namespace autocomp::cli
