// EvalJob (evaluator.h): one candidate's evaluation, step by step, locally or on a remote machine, and
// the reading of its judge's result file. The Evaluator schedules the jobs (evaluator.cpp).
#include "eval/evaluator.h"
#include "eval/process_runner.h"
#include "eval/remote_executor.h"

#include <QCryptographicHash>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>

#include <algorithm>
#include <utility>

namespace autocomp {

EvalJob::EvalJob(Evaluator *evaluator, Target target, Problem problem, QString code, QString baselineCode)
    : QObject(evaluator)
    , m_evaluator(evaluator)
    , m_target(std::move(target))
    , m_problem(std::move(problem))
    , m_code(std::move(code))
    , m_baselineCode(std::move(baselineCode))
{
    m_seed = QString::number(QRandomGenerator::system()->generate64() >> 1);
}

EvalJob::~EvalJob()
{
    const EvalRuntimeCpu::Scope runtimeCpu; // removing the work directory
    m_dir.reset();
}

// The job's directory holds two: work/, which candidate steps write (sources, objects, remarks),
// and judge/, which only judging steps write (reports, result.json).
QString EvalJob::workdir() const { return m_dir ? m_dir->filePath(QStringLiteral("work")) : QString(); }

QString EvalJob::judgedir() const { return m_dir ? m_dir->filePath(QStringLiteral("judge")) : QString(); }

QHash<QString, QString> EvalJob::placeholders() const
{
    // Without a baseline {baseline} names no file, so the steps that build or time it are skipped.
    return {
        {QStringLiteral("candidate"), m_candidateFile},
        {QStringLiteral("workdir"), workdir()},
        {QStringLiteral("judgedir"), judgedir()},
        {QStringLiteral("baseline"),
         m_baselineFile.isEmpty() ? workdir() + QStringLiteral("/no-baseline") : m_baselineFile},
        {QStringLiteral("seed"), m_seed},
        {QStringLiteral("candidate_hash"),
         QString::fromLatin1(QCryptographicHash::hash(m_code.toUtf8(), QCryptographicHash::Sha256).toHex().left(24))}};
}

namespace {

// Copies a directory tree (files and sub-directories; links are not followed, and not copied).
bool copyTree(const QString &from, const QString &to)
{
    if (!QDir().mkpath(to))
        return false;
    QDirIterator it(from, QDir::Files | QDir::Dirs | QDir::NoDotAndDotDot | QDir::Hidden, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString path = it.next();
        const QFileInfo info = it.fileInfo();
        if (info.isSymLink())
            continue;
        const QString target = to + QLatin1Char('/') + QDir(from).relativeFilePath(path);
        if (info.isDir()) {
            if (!QDir().mkpath(target))
                return false;
        } else if (!QFile::copy(path, target)) {
            return false;
        } else {
            QFile::setPermissions(target, info.permissions());
        }
    }
    return true;
}

} // namespace

bool EvalJob::reuseCachedOutput(const TargetStep &step)
{
    m_reuseEntry.clear();
    if (step.reuseKey.isEmpty())
        return false;
    const QHash<QString, QString> vars = placeholders();
    const QString key = Evaluator::expand(step.reuseKey, m_target, m_problem, vars);
    const QString hash = QString::fromLatin1(
        QCryptographicHash::hash(key.toUtf8(), QCryptographicHash::Sha256).toHex().left(32));
    const QString entry = Evaluator::cacheDir() + QStringLiteral("/reuse/") + m_target.name + QLatin1Char('-')
        + step.name + QLatin1Char('/') + hash;
    const QString output = Evaluator::expand(step.reuseOutput, m_target, m_problem, vars);
    // An entry is complete once renamed into place (see storeReusableOutput).
    if (QFileInfo(entry).isDir() && copyTree(entry, output)) {
        StepResult result;
        result.name = step.name;
        result.exitCode = 0;
        result.log = QStringLiteral(
                         "reused the output of an earlier identical '%1' (cache key %2) instead of running it again")
                         .arg(step.name, key);
        QMetaObject::invokeMethod(
            this, [this, result] { stepFinished(result); }, Qt::QueuedConnection);
        return true;
    }
    QDir(output).removeRecursively();
    m_reuseEntry = entry;
    return false;
}

void EvalJob::storeReusableOutput(const TargetStep &step)
{
    const QString entry = std::exchange(m_reuseEntry, QString());
    if (entry.isEmpty() || QFileInfo::exists(entry))
        return;
    // Written under a temporary name and renamed, so a reader never sees half an entry; the
    // evaluator, not the candidate, decides what is kept and under which key.
    const QString output = Evaluator::expand(step.reuseOutput, m_target, m_problem, placeholders());
    const QString staging = entry + QStringLiteral(".tmp-%1").arg(QRandomGenerator::global()->generate64(), 0, 16);
    if (!QFileInfo(output).isDir() || !copyTree(output, staging) || !QDir().rename(staging, entry))
        QDir(staging).removeRecursively();
}

void EvalJob::skipInapplicableSteps()
{
    // Remote steps are the far side's to skip: the files they test are there.
    while (m_stepIndex < m_target.steps.size() && m_stepIndex < m_remoteFrom) {
        const TargetStep &step = m_target.steps.at(m_stepIndex);
        if (step.onlyIfExists.isEmpty()
            || QFileInfo::exists(Evaluator::expand(step.onlyIfExists, m_target, m_problem, placeholders())))
            return;
        ++m_stepIndex;
    }
}

void EvalJob::cancel()
{
    if (m_done)
        return;
    m_cancelled = true;
    if (m_runner)
        m_runner->cancel();
    else if (m_remote)
        m_remote->cancel();
    else {
        m_result.status = QStringLiteral("cancelled");
        complete();
    }
}

void EvalJob::runCurrentStep(bool sandbox, const QList<int> &cpus, const QList<int> &judgeCpus)
{
    const EvalRuntimeCpu::Scope runtimeCpu;
    const TargetStep &step = currentStep();
    {
        const EvalRuntimeCpu::Pause handlers;
        if (step.exclusive)
            Q_EMIT statusChanged(CandidateStatus::Benchmarking);
        else if (step.failStatus == QLatin1String("compile_error"))
            Q_EMIT statusChanged(CandidateStatus::Compiling);
        else
            Q_EMIT statusChanged(CandidateStatus::Testing);
    }

    if (reuseCachedOutput(step)) {
        const EvalRuntimeCpu::Pause handlers;
        Q_EMIT stepStarted(step.name, QStringLiteral("reused: the same file was built before on this machine"));
        return;
    }
    {
        const EvalRuntimeCpu::Pause handlers;
        Q_EMIT stepStarted(
            step.name,
            step.reuseKey.isEmpty()
                ? QString()
                : QStringLiteral("building; kept in the cache by content hash, so the same file is not built twice"));
    }
    const QHash<QString, QString> vars = placeholders();
    const QStringList command = Evaluator::expandArgs(step.run, m_target, m_problem, vars);
    ProcessLimits limits;
    limits.timeoutS = step.timeoutS;
    limits.sandbox = sandbox;
    limits.environment = Evaluator::stepEnvironment(m_target, m_problem);
    limits.readOnlyDirs = Evaluator::sandboxReadOnly(m_target, m_problem, step.judge());
    limits.gpu = step.gpu;
    if (step.judge()) {
        // Trusted: reads the candidate's files, writes only its own directory, sees the workers' /proc.
        limits.writableDir = judgedir();
        limits.readOnlyDirs << workdir();
        limits.sharePids = true;
    } else {
        limits.writableDir = workdir();
    }
    m_runner = new ProcessRunner(this);
    connect(m_runner, &ProcessRunner::finished, this, &EvalJob::stepFinished);
    if (step.worker.isEmpty()) {
        limits.cpus = cpus;
        m_runner->start(step.name, command, workdir(), limits);
        return;
    }
    QList<QStringList> workers{Evaluator::expandArgs(step.worker, m_target, m_problem, vars)};
    if (!step.baselineWorker.isEmpty() && !m_baselineFile.isEmpty())
        workers << Evaluator::expandArgs(step.baselineWorker, m_target, m_problem, vars);
    ProcessLimits workerLimits;
    workerLimits.timeoutS = step.timeoutS;
    workerLimits.sandbox = sandbox;
    workerLimits.environment = limits.environment;
    workerLimits.readOnlyDirs = Evaluator::sandboxReadOnly(m_target, m_problem, false) << workdir();
    workerLimits.gpu = step.gpu;
    if (!step.workerWritable.isEmpty()) {
        workerLimits.writableDir = Evaluator::expand(step.workerWritable, m_target, m_problem, vars);
        QDir().mkpath(workerLimits.writableDir);
    }
    workerLimits.cpus = cpus;
    workerLimits.cpuset = step.exclusive;
    limits.cpus = judgeCpus;
    m_runner->startJudged(step.name, command, workers, workdir(), limits, workerLimits);
}

void EvalJob::stepFinished(const StepResult &step)
{
    const EvalRuntimeCpu::Scope runtimeCpu;
    if (m_runner)
        m_runner->deleteLater(); // none for a step whose output was reused
    m_runner = nullptr;
    const TargetStep &spec = currentStep();
    m_evaluator->release(this, spec.exclusive);
    if (m_cancelled) {
        m_result.steps << step;
        m_result.status = QStringLiteral("cancelled");
        complete();
        return;
    }
    if (step.setupFailed) {
        // The machinery could not apply the step's limits (a cgroup gone, a descriptor): the command
        // never ran. Tried once more, then an evaluation error, never a verdict about the candidate.
        Q_EMIT m_evaluator->logMessage(
            QStringLiteral("step '%1': %2%3")
                .arg(step.name, step.log, m_setupRetried ? QString() : QStringLiteral(", trying again")));
        if (!m_setupRetried) {
            m_setupRetried = true;
            m_evaluator->enqueue(this);
            return;
        }
        m_result.steps << step;
        m_result.status = QStringLiteral("error");
        m_result.correct = false;
        m_result.log =
            QStringLiteral("step '%1' could not be run (no verdict about the candidate): %2").arg(step.name, step.log);
        complete();
        return;
    }
    m_result.steps << step;
    const bool failed = step.timedOut || step.crashed || step.exitCode != 0;
    const QString resultFile = QDir(judgedir()).filePath(QStringLiteral("result.json"));
    // An optional step's failure is noted, not fatal, unless it flooded its output (a rejection).
    const bool optionalFailure = failed && spec.optional && !step.outputFlooded;
    if (optionalFailure) {
        // Extra feedback that could not be had (e.g. no valgrind for the cache profile): said, not fatal.
        const QString lastLine = step.log.trimmed().section(QLatin1Char('\n'), -1);
        m_optionalNotes << QStringLiteral("step '%1' (optional) %2%3")
                               .arg(step.name,
                                    step.timedOut      ? QStringLiteral("timed out after %1 s").arg(spec.timeoutS)
                                        : step.crashed ? QStringLiteral("crashed")
                                                       : QStringLiteral("exited with status %1").arg(step.exitCode),
                                    lastLine.isEmpty() ? QString() : QStringLiteral(": ") + lastLine.left(300));
    } else if (!step.outputFlooded && step.exitCode != 0 && !step.timedOut && !step.crashed && spec.judge()
               && QFile::exists(resultFile)) {
        // The evaluator explained the failure itself (e.g. the report step found a wrong timed output).
        parseResultFile();
        if (m_result.status != QLatin1String("ok") && m_result.status != QLatin1String("error")) {
            m_result.correct = false;
            // A judge usually prints the verdict it writes (the shipped ones to stderr): its output is
            // kept only for what result.json's log does not already say (the workers' sections, a warning).
            const QString fileLog = m_result.log.trimmed();
            QString rest = step.log;
            if (const qsizetype at = fileLog.isEmpty() ? -1 : rest.indexOf(fileLog); at >= 0)
                rest.remove(at, fileLog.size());
            rest = rest.trimmed();
            m_result.log = QStringLiteral("step '%1' exited with status %2\n%3%4")
                               .arg(step.name)
                               .arg(step.exitCode)
                               .arg(fileLog, rest.isEmpty() ? QString() : QLatin1Char('\n') + rest);
            complete();
            return;
        }
        const QList<StepResult> steps = m_result.steps;
        m_result = EvalResult{};
        m_result.steps = steps;
    }
    if (step.outputFlooded) {
        m_result.status = QStringLiteral("rejected");
        m_result.correct = false;
        m_result.flags << QStringLiteral("output flood: step '%1' wrote far more output than is kept and was stopped")
                              .arg(step.name);
        m_result.log = QStringLiteral("step '%1' was killed for flooding its output\n%2").arg(step.name, step.log);
        complete();
        return;
    }
    if (failed && !optionalFailure) {
        m_result.status = step.timedOut ? QStringLiteral("timeout") : spec.failStatus;
        if (step.crashed && spec.failStatus != QLatin1String("compile_error"))
            m_result.status = QStringLiteral("crash");
        m_result.correct = false;
        m_result.log = QStringLiteral("step '%1' %2\n%3")
                           .arg(step.name,
                                step.timedOut      ? QStringLiteral("timed out after %1 s").arg(spec.timeoutS)
                                    : step.crashed ? QStringLiteral("crashed")
                                                   : QStringLiteral("exited with status %1").arg(step.exitCode),
                                step.log);
        complete();
        return;
    }
    if (!failed)
        storeReusableOutput(spec);
    ++m_stepIndex;
    skipInapplicableSteps();
    if (m_stepIndex >= m_target.steps.size()) {
        if (!m_noHardware.isEmpty()) {
            // Compiled (and whatever else needs no hardware) but not run: not the candidate's failure.
            // A judge step may have written its static feedback (registers, occupancy) or its verdict on
            // what could run here (tpu: correctness in an interpreter) already; it has no metric.
            const bool reported = QFile::exists(resultFile);
            if (reported)
                parseResultFile(false);
            const QString log = reported ? m_result.log : QString();
            m_result.status = QStringLiteral("no_hardware");
            m_result.correct = false;
            m_result.feedback << m_optionalNotes << QStringLiteral("not run: %1").arg(m_noHardware);
            m_result.log = QStringLiteral("not run: %1\n%2")
                               .arg(m_noHardware,
                                    log.isEmpty() && !m_result.steps.isEmpty() ? m_result.steps.last().log : log);
            complete();
            return;
        }
        parseResultFile();
        m_result.feedback << m_optionalNotes;
        complete();
        return;
    }
    m_evaluator->enqueue(this);
}

RemoteTask EvalJob::remoteTask() const
{
    RemoteTask task;
    task.key = m_key;
    task.target = m_target;
    task.problem = m_problem;
    task.workdir = workdir();
    task.candidateName = QFileInfo(m_candidateFile).fileName();
    task.baselineName = m_baselineFile.isEmpty() ? QString() : QFileInfo(m_baselineFile).fileName();
    task.fromStep = m_remoteFrom == 0 ? QString() : m_target.steps.at(m_remoteFrom).name;
    task.profile = m_profile;
    // Every remote step at its limit, the setup steps once, and a margin for the transfers.
    int limit = 120;
    for (qsizetype i = m_remoteFrom; i < m_target.steps.size(); ++i)
        limit += m_target.steps.at(i).timeoutS;
    for (const TargetStep &step : std::as_const(m_target.setupSteps))
        limit += step.timeoutS;
    task.timeoutS = limit;
    return task;
}

void EvalJob::runRemote(int slot, RemoteAttempt *attempt)
{
    {
        const EvalRuntimeCpu::Pause handlers;
        Q_EMIT statusChanged(m_remoteFrom == 0 ? CandidateStatus::Compiling : CandidateStatus::Testing);
    }
    QElapsedTimer clock;
    clock.start();
    m_remote = attempt;
    connect(m_remote, &RemoteAttempt::finished, this,
            [this, slot, clock](const QJsonObject &result, const QString &failure) {
                StepResult note;
                note.name = QStringLiteral("remote");
                note.command = {m_evaluator->m_remote->name(), m_evaluator->m_remote->slotName(slot)};
                note.durationMs = double(clock.nsecsElapsed()) / 1e6;
                note.exitCode = failure.isEmpty() ? 0 : 1;
                note.log = failure.isEmpty()
                    ? QStringLiteral("evaluated on %1 (%2)")
                          .arg(m_evaluator->m_remote->slotName(slot), m_evaluator->m_remote->name())
                    : failure;
                if (!m_cancelled)
                    m_result.steps << note;
                remoteFinished(slot, result, failure);
            });
}

void EvalJob::remoteFinished(int slot, const QJsonObject &result, const QString &failure)
{
    const EvalRuntimeCpu::Scope runtimeCpu;
    m_remote = nullptr;
    RemoteExecutor *executor = m_evaluator->m_remote.get();
    --m_evaluator->m_slotUse[slot];
    QMetaObject::invokeMethod(m_evaluator, &Evaluator::schedule, Qt::QueuedConnection);
    if (m_cancelled) {
        m_result.status = QStringLiteral("cancelled");
        complete();
        return;
    }
    QString why = failure;
    EvalResult remote;
    if (why.isEmpty())
        remote = RemoteExecutor::resultFromJson(result, m_target.metric, &why);
    if (!why.isEmpty()) {
        // The machinery failed, not the candidate: another slot (another host first) tries again.
        m_remoteFailures << QStringLiteral("%1: %2").arg(executor->slotName(slot), why);
        if (!m_triedGroups.contains(executor->slotGroup(slot)))
            m_triedGroups << executor->slotGroup(slot);
        Q_EMIT m_evaluator->logMessage(QStringLiteral("remote evaluation failed on %1, %2: %3")
                                           .arg(executor->slotName(slot),
                                                m_remoteFailures.size() > m_evaluator->m_config.remoteRetries
                                                    ? QStringLiteral("giving up")
                                                    : QStringLiteral("trying again"),
                                                why));
        if (m_remoteFailures.size() > m_evaluator->m_config.remoteRetries) {
            m_result.status = QStringLiteral("error");
            m_result.correct = false;
            m_result.log = QStringLiteral("the remote evaluation failed %1 times (no verdict about the candidate):\n%2")
                               .arg(m_remoteFailures.size())
                               .arg(m_remoteFailures.join(QLatin1Char('\n')));
            complete();
            return;
        }
        m_evaluator->enqueue(this);
        return;
    }
    const QList<StepResult> steps = m_result.steps;
    m_result = remote;
    m_result.steps = steps + remote.steps;
    m_result.feedback << m_optionalNotes;
    if (!m_remoteFailures.isEmpty())
        m_result.feedback << QStringLiteral("evaluated after %1 remote failure(s): %2")
                                 .arg(m_remoteFailures.size())
                                 .arg(m_remoteFailures.last());
    complete();
}

void EvalJob::parseResultFile(bool requireMetric)
{
    // Only a judging step writes here; a candidate step cannot.
    const QString path = QDir(judgedir()).filePath(QStringLiteral("result.json"));
    QFile file(path);
    auto fail = [&](const QString &why) {
        m_result.status = QStringLiteral("error");
        m_result.correct = false;
        m_result.log = why + QStringLiteral("\nlast step's output:\n")
            + (m_result.steps.isEmpty() ? QString() : m_result.steps.last().log);
    };
    if (!file.open(QIODevice::ReadOnly)) {
        fail(QStringLiteral("the evaluator wrote no result.json (%1)").arg(file.errorString()));
        return;
    }
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(file.read(4 << 20), &error);
    if (error.error != QJsonParseError::NoError || !doc.isObject()) {
        fail(QStringLiteral("result.json is not a JSON object: %1 at offset %2")
                 .arg(error.errorString())
                 .arg(error.offset));
        return;
    }
    QString why;
    const std::optional<EvalResult> parsed = EvalResult::fromJson(doc.object(), EvalResult::Source::Judge,
                                                                  requireMetric ? m_target.metric : QString(), &why);
    if (!parsed) {
        fail(QStringLiteral("result.json: ") + why);
        return;
    }
    const QList<StepResult> steps = m_result.steps;
    m_result = *parsed;
    m_result.steps = steps; // a judge's own "steps" are not the evaluation's
}

void EvalJob::complete()
{
    if (m_done)
        return;
    m_done = true;
    if (!m_evaluator->m_sandbox && m_result.status != QLatin1String("cancelled") && m_remoteFrom > 0)
        m_result.flags << QStringLiteral("unsandboxed: evaluated without the bubblewrap sandbox (%1)")
                              .arg(m_evaluator->m_sandboxNote);
    {
        const EvalRuntimeCpu::Pause handlers;
        Q_EMIT finished(m_result);
    }
    deleteLater();
}

} // namespace autocomp
