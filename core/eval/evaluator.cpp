#include "eval/evaluator.h"
#include "eval/process_runner.h"
#include "platform/sandbox.h"
#include "eval/remote_executor.h"

#include <QCryptographicHash>
#include <QDir>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QSet>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLockFile>
#include <QTimer>
#include <QLoggingCategory>
#include <QMutex>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QSysInfo>
#include <QThread>

#include <algorithm>
#include <fcntl.h>
#include <sched.h>
#include <sys/file.h>
#include <unistd.h>

#include <utility>

Q_LOGGING_CATEGORY(lcEval, "autocomp.eval")

namespace autocomp {

namespace {

QString toleranceArgument(const Problem &p)
{
    // A KernelBench problem without its own tolerance: the judge picks KernelBench's by the output dtype.
    if (!p.toleranceSet && p.format == QLatin1String("kernelbench"))
        return QStringLiteral("auto");
    return QStringLiteral("rtol=%1,atol=%2").arg(p.rtol, 0, 'g', 6).arg(p.atol, 0, 'g', 6);
}

} // namespace

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

Evaluator::Evaluator(const EvaluationConfig &config, QObject *parent)
    : QObject(parent)
    , m_config(config)
    , m_parallelSlots(config.parallelCompiles > 0 ? config.parallelCompiles : QThread::idealThreadCount())
    , m_benchSlots(qMax(1, config.benchSlots))
{
    // The CPUs this process may use (a container may allow fewer than the machine has).
    QList<int> allowed;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) == 0)
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &set))
                allowed << c;
    const bool cpuIsolation = config.benchIsolation != QLatin1String("exclusive");
    if (cpuIsolation && allowed.size() > m_benchSlots) {
        m_reserveCpus = true;
        m_freeBenchCpus = allowed.mid(allowed.size() - m_benchSlots);
        m_parallelCpus = allowed.mid(0, allowed.size() - m_benchSlots);
    }
    if (config.executor != QLatin1String("local")) {
        QString error;
        m_remote = RemoteExecutor::create(config, &error);
        if (!m_remote)
            m_configError = error;
        else
            m_slotUse = QList<int>(m_remote->slotCount(), 0);
    }
    if (config.sandbox == QLatin1String("off")) {
        m_sandboxNote = QStringLiteral("sandbox off (evaluation.sandbox: off): candidates run without bubblewrap");
    } else if (ProcessRunner::sandboxAvailable()) {
        m_sandbox = true;
    } else if (config.sandbox == QLatin1String("required")) {
        m_configError = QStringLiteral("evaluation.sandbox is 'required' but the sandbox cannot run here: %1")
                            .arg(Sandbox::unavailableReason());
    } else {
        m_sandboxNote = QStringLiteral("sandbox unavailable (%1): candidates run with rlimits and process groups only")
                            .arg(Sandbox::unavailableReason());
    }
}

Evaluator::~Evaluator()
{
    // Jobs first (their attempts belong to the executor), then the executor (closing its connections).
    for (EvalJob *job : findChildren<EvalJob *>(Qt::FindDirectChildrenOnly))
        delete job;
    m_remote.reset();
    if (m_nodeLockFd >= 0)
        ::close(m_nodeLockFd);
}

QString Evaluator::placement(const Target &target) const
{
    return m_remote ? m_config.placementFor(target.name) : QStringLiteral("local");
}

QString Evaluator::cacheDir()
{
    static const QString s_dir = [] {
        const QString dir = QStandardPaths::writableLocation(QStandardPaths::GenericCacheLocation)
            + QStringLiteral("/autocomp-workbench");
        QDir().mkpath(dir);
        return dir;
    }();
    return s_dir;
}

QString Evaluator::machineId()
{
    static const QString s_id = [] {
        QString model;
        QFile cpuinfo(QStringLiteral("/proc/cpuinfo"));
        if (cpuinfo.open(QIODevice::ReadOnly)) {
            for (const QByteArray &line : cpuinfo.readAll().split('\n')) {
                if (line.startsWith("model name")) {
                    model = QString::fromUtf8(line.mid(line.indexOf(':') + 1)).trimmed();
                    break;
                }
            }
        }
        if (model.isEmpty())
            model = QSysInfo::currentCpuArchitecture();
        QString id = QSysInfo::machineHostName() + QLatin1Char('-') + model;
        id.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9._-]+")), QStringLiteral("_"));
        return id;
    }();
    return s_id;
}

QStringList Evaluator::placeholderNames()
{
    // Per evaluation (EvalJob::placeholders), per judged step (ProcessRunner::startJudged), then expand().
    return {QStringLiteral("candidate"),       QStringLiteral("workdir"),       QStringLiteral("judgedir"),
            QStringLiteral("baseline"),        QStringLiteral("seed"),          QStringLiteral("channels"),
            QStringLiteral("worker_pids"),     QStringLiteral("backend_dir"),   QStringLiteral("problem_dir"),
            QStringLiteral("problem"),         QStringLiteral("entry"),         QStringLiteral("reference"),
            QStringLiteral("shapes"),          QStringLiteral("bench_shape"),   QStringLiteral("tolerance"),
            QStringLiteral("allow_libraries"), QStringLiteral("allow_threads"), QStringLiteral("libraries"),
            QStringLiteral("libraries_csv"),   QStringLiteral("shape_ranges"),  QStringLiteral("random_shapes"),
            QStringLiteral("cache_dir"),       QStringLiteral("machine"),       QStringLiteral("target"),
            QStringLiteral("sources_hash"),    QStringLiteral("backend_hash"),  QStringLiteral("env:NAME"),
            QStringLiteral("candidate_hash"),  QStringLiteral("scale"),         QStringLiteral("level"),
            QStringLiteral("problem_slug")};
}

QString Evaluator::expand(QString out, const Target &target, const Problem &problem,
                          const QHash<QString, QString> &extra)
{
    const QString benchShape = problem.shapeArgument(problem.benchShape);
    for (auto it = extra.cbegin(); it != extra.cend(); ++it)
        out.replace(QLatin1Char('{') + it.key() + QLatin1Char('}'), it.value());
    out.replace(QLatin1String("{backend_dir}"), target.dir);
    out.replace(QLatin1String("{problem_dir}"), problem.dir);
    out.replace(QLatin1String("{problem}"), problem.name);
    out.replace(QLatin1String("{problem_slug}"), QString(problem.name).replace(QLatin1Char('/'), QLatin1Char('-')));
    out.replace(QLatin1String("{scale}"), QString::number(problem.scale, 'g', 10));
    out.replace(QLatin1String("{level}"), QString::number(problem.level));
    out.replace(QLatin1String("{entry}"), problem.entry.isEmpty() ? problem.name : problem.entry);
    out.replace(QLatin1String("{reference}"), problem.referenceFile);
    out.replace(QLatin1String("{shapes}"), problem.shapesArgument());
    out.replace(QLatin1String("{bench_shape}"), benchShape);
    out.replace(QLatin1String("{tolerance}"), toleranceArgument(problem));
    out.replace(QLatin1String("{allow_libraries}"), problem.allowLibraries ? QStringLiteral("1") : QStringLiteral("0"));
    out.replace(QLatin1String("{allow_threads}"), problem.allowThreads ? QStringLiteral("1") : QStringLiteral("0"));
    out.replace(QLatin1String("{libraries_csv}"),
                problem.allowLibraries ? problem.libraries.join(QLatin1Char(',')) : QString());
    out.replace(QLatin1String("{shape_ranges}"), problem.shapeRangesArgument());
    out.replace(QLatin1String("{random_shapes}"),
                QString::number(problem.shapeRanges.isEmpty() ? 0 : problem.randomShapes));
    out.replace(QLatin1String("{cache_dir}"), cacheDir());
    out.replace(QLatin1String("{machine}"), machineId());
    out.replace(QLatin1String("{target}"), target.name);
    if (out.contains(QLatin1String("{sources_hash}")))
        out.replace(QLatin1String("{sources_hash}"), sourcesHash(target, problem));
    if (out.contains(QLatin1String("{backend_hash}")))
        out.replace(QLatin1String("{backend_hash}"), sourcesHash(target, Problem{}));
    // Target settings (backend.yaml `settings:`), e.g. {vlen}.
    for (const auto &setting : target.settings)
        out.replace(QLatin1Char('{') + setting.first + QLatin1Char('}'), setting.second);
    // {env:NAME}: a tool location given by the environment (e.g. a compiler or a test double).
    static const QRegularExpression s_env(QStringLiteral("\\{env:([A-Za-z_][A-Za-z0-9_]*)\\}"));
    // A name that looks like a secret expands to nothing: no step ever gets one.
    static const QRegularExpression s_secret(QStringLiteral("KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL"),
                                             QRegularExpression::CaseInsensitiveOption);
    for (auto m = s_env.match(out); m.hasMatch(); m = s_env.match(out))
        out.replace(m.capturedStart(), m.capturedLength(),
                    s_secret.match(m.captured(1)).hasMatch()
                        ? QString()
                        : qEnvironmentVariable(m.captured(1).toLatin1().constData()));
    return out;
}

namespace {
// A target's tools, looked up once per process and target (PATH does not change under a running program).
Target::ToolView toolsOf(const Target &target)
{
    static QMutex s_mutex;
    static QHash<QString, Target::ToolView> s_views;
    const QString key = target.dir + QLatin1Char('|') + target.name;
    {
        const QMutexLocker lock(&s_mutex);
        if (const auto it = s_views.constFind(key); it != s_views.cend())
            return *it;
    }
    const Target::ToolView view = target.toolView();
    const QMutexLocker lock(&s_mutex);
    s_views.insert(key, view);
    return view;
}
} // namespace

QMap<QString, QString> Evaluator::stepEnvironment(const Target &target, const Problem &problem)
{
    QMap<QString, QString> env;
    // The target's tools where the user has them (Chipyard's $RISCV/bin, a venv, /opt/...), before the system's.
    if (const QStringList dirs = toolsOf(target).pathDirs; !dirs.isEmpty())
        env.insert(
            QStringLiteral("PATH"),
            (dirs + QStringList{QStringLiteral("/usr/local/bin"), QStringLiteral("/usr/bin"), QStringLiteral("/bin")})
                .join(QLatin1Char(':')));
    for (auto it = target.environment.cbegin(); it != target.environment.cend(); ++it)
        env.insert(it.key(), expand(it.value(), target, problem, {}));
    return env;
}

QStringList Evaluator::sandboxReadOnly(const Target &target, const Problem &problem, bool trusted)
{
    QStringList dirs{cacheDir()};
    auto add = [&dirs](const QString &path) {
        const QString clean = QDir::cleanPath(path);
        if (path.isEmpty() || !QFileInfo::exists(clean))
            return;
        for (const QString &p : {clean, QFileInfo(clean).canonicalFilePath()})
            if (!p.isEmpty() && !dirs.contains(p))
                dirs << p;
    };
    add(target.dir);
    for (const QString &path : target.sandboxReadOnly)
        if (const QString expanded = expand(path, target, problem, {});
            QDir::cleanPath(expanded).startsWith(QLatin1Char('/')))
            add(expanded);
    for (const QString &path : toolsOf(target).readOnly)
        add(path);
    if (trusted)
        add(problem.dir);
    return dirs;
}

QStringList Evaluator::expandArgs(const QStringList &run, const Target &target, const Problem &problem,
                                  const QHash<QString, QString> &extra)
{
    QStringList command;
    for (const QString &arg : run) {
        if (arg == QLatin1String("{libraries}")) {
            if (problem.allowLibraries)
                for (const QString &library : problem.libraries)
                    command << QStringLiteral("-l") + library;
            continue;
        }
        // "{backend_dir}/../cpu/include" becomes a plain path: the sandbox binds directories, and
        // a path through one it does not show would not resolve.
        QString expanded = expand(arg, target, problem, extra);
        static const QRegularExpression s_dotted(QStringLiteral("^(-[A-Za-z]|--?[A-Za-z-]+=)?(/.*/\\.\\./.*)$"));
        if (const auto m = s_dotted.match(expanded); m.hasMatch())
            expanded = m.captured(1) + QDir::cleanPath(m.captured(2));
        command << expanded;
    }
    return command;
}

QString Evaluator::sourcesHash(const Target &target, const Problem &problem)
{
    // The target's and the problem's files and every -I directory of the steps: a cached build
    // product named with this hash is rebuilt whenever any of them changes. Computed once per
    // process, so setup and steps agree even when a file is edited while the program runs.
    // No lock is held while expanding: an -I argument may itself name a hash
    // ("-I{cache_dir}/x-{backend_hash}/include"), and expanding it comes back here (a re-entrant call on a held lock
    // hung every evaluation of such a target).
    static QMutex s_mutex;
    static QHash<QString, QString> s_hashes;
    const QString key = target.dir + QLatin1Char('|') + problem.dir;
    {
        const QMutexLocker lock(&s_mutex);
        if (const auto it = s_hashes.constFind(key); it != s_hashes.cend())
            return *it;
    }
    // Without a problem (its dir empty): the backend's files alone, {backend_hash}. Folders that a hash
    // names are build products in the cache, not sources: left out.
    QStringList dirs{target.dir};
    if (!problem.dir.isEmpty())
        dirs << problem.dir;
    for (const QList<TargetStep> *steps : {&target.steps, &target.setupSteps})
        for (const TargetStep &step : *steps)
            for (const QString &arg : step.run)
                if (arg.startsWith(QLatin1String("-I"))
                    && (!problem.dir.isEmpty() || !arg.contains(QLatin1String("{problem_dir}")))
                    && !arg.contains(QLatin1String("_hash}")) && !arg.contains(QLatin1String("{cache_dir}")))
                    dirs << QDir::cleanPath(expand(arg.mid(2), target, problem, {}));
    // Read-only paths inside the folder of the backends (sandbox_read_only: a judge kit shared by
    // several targets, such as backends/common) are sources too: a change there rebuilds what was
    // built from them. Paths elsewhere (a Python environment) are tools, not sources.
    const QString backendsRoot = QFileInfo(QDir::cleanPath(target.dir)).path() + QLatin1Char('/');
    for (const QString &path : target.sandboxReadOnly)
        if (!path.contains(QLatin1String("_hash}"))
            && (!problem.dir.isEmpty() || !path.contains(QLatin1String("{problem_dir}"))))
            if (const QString dir = QDir::cleanPath(expand(path, target, problem, {})); dir.startsWith(backendsRoot))
                dirs << dir;
    QStringList files;
    for (const QString &dir : std::as_const(dirs)) {
        QDirIterator it(dir, QDir::Files, QDirIterator::Subdirectories);
        while (it.hasNext()) {
            const QString path = it.next();
            // Python's bytecode caches are written by the tools as they run: not part of what is hashed.
            if (path.contains(QLatin1String("/__pycache__/")) || path.endsWith(QLatin1String(".pyc")))
                continue;
            files << QFileInfo(path).canonicalFilePath();
        }
    }
    files.removeDuplicates();
    files.sort();
    QCryptographicHash hash(QCryptographicHash::Sha1);
    for (const QString &path : std::as_const(files)) {
        QFile file(path);
        if (file.open(QIODevice::ReadOnly)) {
            hash.addData(path.toUtf8());
            hash.addData(file.readAll());
        }
    }
    const QString result = QString::fromLatin1(hash.result().toHex().left(16));
    const QMutexLocker lock(&s_mutex);
    // Another thread may have computed it meanwhile (the same files, the same hash): the first one stays.
    return *s_hashes.insert(key, s_hashes.value(key, result));
}

Target Evaluator::withOptions(Target target, const EvaluationConfig &config)
{
    const auto off = [&config](const TargetStep &step) {
        return step.option == QLatin1String("profile") && !config.profile;
    };
    target.steps.removeIf(off);
    target.setupSteps.removeIf(off);
    return target;
}

EvalJob *Evaluator::evaluate(const Target &shipped, const Problem &problem, const QString &code,
                             const QString &baselineCode, const EvaluationConfig *options, const EvalRequest &request)
{
    const EvaluationConfig &config = options ? *options : m_config;
    Target target = withOptions(shipped, config);
    // Steps that need the hardware (a GPU) are left out when it is absent or with compile_only: the
    // evaluation then stops after compiling, with the status no_hardware. Never simulated.
    QString noHardware;
    if (std::any_of(target.steps.cbegin(), target.steps.cend(), [](const TargetStep &s) { return s.needsHardware; })) {
        if (config.compileOnly)
            noHardware = QStringLiteral(
                "evaluation.compile_only is on, so the steps that need the hardware were left out");
        else if (const QString absent = target.hardwareAbsence(); !absent.isEmpty())
            noHardware = QStringLiteral("no hardware for target '%1' on this machine: %2").arg(target.name, absent);
        if (!noHardware.isEmpty())
            target.steps.removeIf([](const TargetStep &s) { return s.needsHardware; });
    }
    auto *job = new EvalJob(this, target, problem, code, baselineCode);
    job->m_noHardware = noHardware;
    job->m_key = request.key;
    job->m_profile = config.profile;
    const QString where = placement(target);
    job->m_remoteFrom = target.steps.size();
    if (where == QLatin1String("remote")) {
        job->m_remoteFrom = 0;
    } else if (where == QLatin1String("compile_local")) {
        // Every step up to the last compile step runs here; the rest (running, judging) over there.
        for (qsizetype i = target.steps.size() - 1; i >= 0; --i) {
            if (target.steps.at(i).failStatus == QLatin1String("compile_error")) {
                job->m_remoteFrom = i + 1;
                break;
            }
        }
    }
    {
        const EvalRuntimeCpu::Scope runtimeCpu;
        job->m_dir = std::make_unique<QTemporaryDir>(QDir::tempPath() + QStringLiteral("/autocomp-eval-XXXXXX"));
        job->m_dir->setAutoRemove(!config.keepWorkdirs);
        job->m_candidateFile = QDir(job->workdir()).filePath(QStringLiteral("candidate.") + target.fileExtension);
        bool ok = job->m_dir->isValid() && QDir().mkpath(job->workdir()) && QDir().mkpath(job->judgedir());
        QFile file(job->m_candidateFile);
        ok = ok && file.open(QIODevice::WriteOnly) && file.write(code.toUtf8()) >= 0;
        file.close();
        if (ok && !baselineCode.isEmpty() && baselineCode != code) {
            job->m_baselineFile = QDir(job->workdir()).filePath(QStringLiteral("baseline.") + target.fileExtension);
            QFile base(job->m_baselineFile);
            ok = base.open(QIODevice::WriteOnly) && base.write(baselineCode.toUtf8()) >= 0;
        }
        // The far side of a remote evaluation: the files the steps before `fromStep` made elsewhere.
        if (ok && !request.seedDir.isEmpty()) {
            const QDir seed(request.seedDir);
            QDirIterator it(request.seedDir, QDir::Files | QDir::Dirs | QDir::NoDotAndDotDot | QDir::Hidden,
                            QDirIterator::Subdirectories);
            while (ok && it.hasNext()) {
                const QString path = it.next();
                const QString copy = QDir(job->workdir()).filePath(seed.relativeFilePath(path));
                if (QFileInfo(path).isDir())
                    ok = QDir().mkpath(copy);
                else if (!QFileInfo::exists(copy))
                    ok = QFile::copy(path, copy);
            }
        }
        if (ok && !request.fromStep.isEmpty()) {
            const auto it = std::find_if(target.steps.cbegin(), target.steps.cend(),
                                         [&](const TargetStep &s) { return s.name == request.fromStep; });
            if (it == target.steps.cend()) {
                job->m_result.status = QStringLiteral("error");
                job->m_result.log =
                    QStringLiteral("target '%1' has no step '%2' to start from").arg(target.name, request.fromStep);
                QMetaObject::invokeMethod(job, &EvalJob::complete, Qt::QueuedConnection);
                return job;
            }
            job->m_stepIndex = int(it - target.steps.cbegin());
        }
        if (!ok) {
            job->m_result.status = QStringLiteral("error");
            job->m_result.log = QStringLiteral("cannot create the work directory: %1").arg(job->m_dir->errorString());
            QMetaObject::invokeMethod(job, &EvalJob::complete, Qt::QueuedConnection);
            return job;
        }
        job->skipInapplicableSteps();
        if (job->m_stepIndex >= target.steps.size() && job->m_remoteFrom > 0) {
            job->m_result.status = QStringLiteral("error");
            job->m_result.log =
                QStringLiteral("target '%1' has no step that applies to this evaluation").arg(target.name);
            QMetaObject::invokeMethod(job, &EvalJob::complete, Qt::QueuedConnection);
            return job;
        }
    }
    // All remote: the host's tools and sandbox count, which its own evaluation checks.
    if (const QString absent = target.absenceReason(); !absent.isEmpty() && job->m_remoteFrom > 0) {
        // Reported as absent, never run: every step would only fail for want of its tools.
        job->m_result.status = QStringLiteral("error");
        job->m_result.log = absent;
        QMetaObject::invokeMethod(job, &EvalJob::complete, Qt::QueuedConnection);
        return job;
    }
    if (!m_configError.isEmpty()) {
        job->m_result.status = QStringLiteral("error");
        job->m_result.log = m_configError;
        QMetaObject::invokeMethod(job, &EvalJob::complete, Qt::QueuedConnection);
        return job;
    }
    Q_EMIT job->statusChanged(CandidateStatus::Pending);
    if (target.setupSteps.isEmpty() || job->m_remoteFrom == 0) {
        enqueue(job);
        return job;
    }
    const QString key = target.dir + QLatin1Char('|') + problem.dir;
    auto it = m_setups.find(key);
    if (it == m_setups.end()) {
        it = m_setups.insert(key, Setup{target, problem, 0, false, QString(), {}});
        it->waiting << job;
        QMetaObject::invokeMethod(
            this, [this, key] { runSetupStep(key); }, Qt::QueuedConnection);
    } else if (!it->done) {
        it->waiting << job;
    } else if (!it->failure.isEmpty()) {
        job->m_result.status = QStringLiteral("error");
        job->m_result.log = it->failure;
        QMetaObject::invokeMethod(job, &EvalJob::complete, Qt::QueuedConnection);
    } else {
        enqueue(job);
    }
    return job;
}

void Evaluator::runSetupStep(const QString &key)
{
    Setup &setup = m_setups[key];
    auto finish = [this, key] {
        Setup &s = m_setups[key];
        s.done = true;
        const auto waiting = std::exchange(s.waiting, {});
        for (const QPointer<EvalJob> &job : waiting) {
            if (!job || job->m_done)
                continue;
            if (s.failure.isEmpty()) {
                enqueue(job);
            } else {
                job->m_result.status = QStringLiteral("error");
                job->m_result.log = s.failure;
                job->complete();
            }
        }
    };
    // Steps whose cache file exists are skipped: the measurement is per machine, not per run. Steps
    // whose precondition file is missing do not apply to this problem.
    while (setup.index < setup.target.setupSteps.size()) {
        const TargetStep &step = setup.target.setupSteps.at(setup.index);
        const bool applies = step.onlyIfExists.isEmpty()
            || QFileInfo::exists(expand(step.onlyIfExists, setup.target, setup.problem, {}));
        if (applies
            && (step.creates.isEmpty() || !QFileInfo::exists(expand(step.creates, setup.target, setup.problem, {}))))
            break;
        ++setup.index;
    }
    if (setup.index >= setup.target.setupSteps.size()) {
        finish();
        return;
    }
    const TargetStep step = setup.target.setupSteps.at(setup.index);
    // Another process (a second CLI, the GUI) may be making the same cache file: one makes it, the
    // others wait and then find it. QLockFile notices a holder that died.
    std::shared_ptr<QLockFile> lock;
    if (!step.creates.isEmpty()) {
        const QString lockPath = expand(step.creates, setup.target, setup.problem, {}) + QStringLiteral(".lock");
        // The file may be made in a folder the step makes itself: the lock needs its folder first.
        QDir().mkpath(QFileInfo(lockPath).absolutePath());
        lock = std::make_shared<QLockFile>(lockPath);
        lock->setStaleLockTime(0);
        if (!lock->tryLock(0)) {
            if (lock->error() != QLockFile::LockFailedError) {
                // Not another process holding it: the lock cannot be made at all (a read-only cache).
                m_setups[key].failure =
                    QStringLiteral(
                        "setup of target '%1' failed: its step '%2' cannot lock %3 (%4). This is a problem of "
                        "this machine (the cache folder %5), not of the code being evaluated.")
                        .arg(setup.target.name, step.name, lockPath,
                             lock->error() == QLockFile::PermissionError ? QStringLiteral("permission denied")
                                                                         : QStringLiteral("unknown error"),
                             cacheDir());
                finish();
                m_setups.remove(key);
                return;
            }
            QTimer::singleShot(200, this, [this, key] { runSetupStep(key); });
            return;
        }
        if (QFileInfo::exists(expand(step.creates, setup.target, setup.problem, {}))) {
            lock->unlock();
            ++setup.index;
            runSetupStep(key);
            return;
        }
    }
    const QString dir = cacheDir();
    const QStringList command = expandArgs(step.run, setup.target, setup.problem, {{QStringLiteral("workdir"), dir}});
    ProcessLimits limits;
    limits.timeoutS = step.timeoutS;
    limits.sandbox = m_sandbox;
    limits.writableDir = dir;
    limits.readOnlyDirs = sandboxReadOnly(setup.target, setup.problem, true);
    limits.gpu = step.gpu;
    limits.environment = stepEnvironment(setup.target, setup.problem);
    Q_EMIT logMessage(QStringLiteral("setup of %1/%2: running '%3' (once per machine, cached in %4)")
                          .arg(setup.target.name, setup.problem.name, step.name, dir));
    auto *runner = new ProcessRunner(this);
    connect(runner, &ProcessRunner::finished, this,
            [this, key, runner, step, command, finish, lock](const StepResult &result) {
                runner->deleteLater();
                if (lock)
                    lock->unlock();
                Setup &s = m_setups[key];
                if (result.exitCode != 0 || result.timedOut || result.crashed) {
                    const QString how = result.timedOut ? QStringLiteral("timed out after %1 s").arg(step.timeoutS)
                        : result.crashed                ? QStringLiteral("was ended by a signal")
                        : result.setupFailed            ? QStringLiteral("could not be run")
                                                        : QStringLiteral("exited with status %1").arg(result.exitCode);
                    const QString why =
                        QStringLiteral(
                            "setup of target '%1' (problem '%2') failed: its step '%3' %4. This is a problem of this "
                            "machine or of the target's installation, not of the code being evaluated: no verdict "
                            "about it. Fix what the step's output below names (a missing package: "
                            "packaging/install-deps.sh --runtime), then evaluate again (autocomp eval --target %1 "
                            "--problem %2 --start repeats the setup).\n--- output of '%3': %5 ---\n%6")
                            .arg(s.target.name, s.problem.name, step.name, how, command.join(QLatin1Char(' ')),
                                 result.log.isEmpty() ? QStringLiteral("(none)") : result.log);
                    if (!step.optional) {
                        s.failure = why;
                        finish();
                        // Not remembered: the next evaluation tries the setup again (the machine may be fixed by then).
                        m_setups.remove(key);
                        return;
                    }
                    Q_EMIT logMessage(why + QStringLiteral("\n(optional: evaluation goes on without it)"));
                }
                ++s.index;
                runSetupStep(key);
            });
    runner->start(step.name, command, dir, limits);
}

void Evaluator::cancelAll()
{
    const auto waiting = m_waiting + m_remoteWaiting;
    m_waiting.clear();
    m_remoteWaiting.clear();
    for (const QPointer<EvalJob> &job : waiting)
        if (job)
            job->cancel();
    for (EvalJob *job : findChildren<EvalJob *>(Qt::FindDirectChildrenOnly))
        job->cancel();
}

void Evaluator::enqueue(EvalJob *job)
{
    if (job->inRemotePhase()) {
        job->m_remoteSince.start();
        m_remoteWaiting << job;
    } else
        m_waiting << job;
    QMetaObject::invokeMethod(this, &Evaluator::schedule, Qt::QueuedConnection);
}

void Evaluator::release(EvalJob *job, bool exclusive)
{
    if (exclusive && job && job->m_benchCpu >= 0) {
        m_freeBenchCpus << job->m_benchCpu;
        job->m_benchCpu = -1;
    }
    if (exclusive)
        --m_runningExclusive;
    else
        --m_runningParallel;
    if (m_runningExclusive == 0)
        releaseNodeBench();
    QMetaObject::invokeMethod(this, &Evaluator::schedule, Qt::QueuedConnection);
}

int Evaluator::remoteSlotFor(const EvalJob *job) const
{
    // A free slot on a machine this job has not failed on; once it failed on all, any free slot.
    int fallback = -1;
    QSet<int> groups;
    for (int slot = 0; slot < m_slotUse.size(); ++slot) {
        groups.insert(m_remote->slotGroup(slot));
        if (m_slotUse.at(slot) > 0)
            continue;
        if (!job->m_triedGroups.contains(m_remote->slotGroup(slot)))
            return slot;
        if (fallback < 0)
            fallback = slot;
    }
    return job->m_triedGroups.size() >= groups.size() ? fallback : -1;
}

void Evaluator::scheduleRemote()
{
    m_remoteWaiting.removeIf([](const QPointer<EvalJob> &job) { return !job || job->m_done; });
    const int batch = m_remote->batchLimit();
    for (qsizetype i = 0; i < m_remoteWaiting.size();) {
        EvalJob *job = m_remoteWaiting.at(i);
        const int slot = remoteSlotFor(job);
        if (slot < 0) {
            ++i;
            continue;
        }
        // The candidates of the same target and problem that may go with it: where more wait than
        // slots are free, several share the slot (one Slurm job), spread evenly over the free slots.
        QList<EvalJob *> group{job};
        if (batch > 1) {
            const int freeSlots = int(std::count(m_slotUse.cbegin(), m_slotUse.cend(), 0));
            QList<EvalJob *> same;
            for (qsizetype k = i + 1; k < m_remoteWaiting.size(); ++k) {
                EvalJob *other = m_remoteWaiting.at(k);
                if (other->m_target.name == job->m_target.name && other->m_problem.dir == job->m_problem.dir
                    && !other->m_triedGroups.contains(m_remote->slotGroup(slot)))
                    same << other;
            }
            const int waiting = int(same.size()) + 1;
            if (waiting < batch && job->m_remoteSince.elapsed() < m_remote->batchWaitMs()) {
                // Not enough for a full batch yet: the slot waits a little for more.
                if (!m_remoteBatchTimer) {
                    m_remoteBatchTimer = true;
                    QTimer::singleShot(qMax<qint64>(1, m_remote->batchWaitMs() - job->m_remoteSince.elapsed()), this,
                                       [this] {
                                           m_remoteBatchTimer = false;
                                           schedule();
                                       });
                }
                ++i;
                continue;
            }
            const int take = std::min(batch, (waiting + freeSlots - 1) / std::max(1, freeSlots));
            group << same.mid(0, take - 1);
        }
        QList<RemoteTask> tasks;
        for (EvalJob *member : std::as_const(group)) {
            m_remoteWaiting.removeOne(member);
            tasks << member->remoteTask();
        }
        m_slotUse[slot] += int(group.size());
        const QList<RemoteAttempt *> attempts = m_remote->startBatch(slot, tasks);
        for (qsizetype k = 0; k < group.size(); ++k)
            group.at(k)->runRemote(slot, attempts.at(k));
    }
}

bool Evaluator::acquireNodeBench()
{
    if (!m_nodeBenchLock || m_nodeLockFd >= 0)
        return true;
    const QByteArray path = QFile::encodeName(cacheDir() + QStringLiteral("/bench-node.lock"));
    const int fd = ::open(path.constData(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return true; // no lock file can be made: the bench slot alone keeps this process's benchmarks apart
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
        m_nodeLockFd = fd;
        return true;
    }
    ::close(fd);
    if (!m_nodeLockRetry) {
        m_nodeLockRetry = true;
        QTimer::singleShot(50, this, [this] {
            m_nodeLockRetry = false;
            schedule();
        });
    }
    return false;
}

void Evaluator::releaseNodeBench()
{
    if (m_nodeLockFd >= 0) {
        ::close(m_nodeLockFd); // closing the descriptor drops the flock
        m_nodeLockFd = -1;
    }
}

void Evaluator::schedule()
{
    const EvalRuntimeCpu::Scope runtimeCpu;
    if (m_remote)
        scheduleRemote();
    m_waiting.removeIf([](const QPointer<EvalJob> &job) { return !job || job->m_done; });
    if (m_reserveCpus) {
        for (qsizetype i = 0; i < m_waiting.size();) {
            EvalJob *job = m_waiting.at(i);
            const bool exclusive = job->currentStep().exclusive;
            if (exclusive && !m_freeBenchCpus.isEmpty() && acquireNodeBench()) {
                m_waiting.removeAt(i);
                ++m_runningExclusive;
                job->m_benchCpu = m_freeBenchCpus.takeFirst();
                // Steps already running move off the benchmark's CPU before it starts.
                for (EvalJob *other : findChildren<EvalJob *>(Qt::FindDirectChildrenOnly))
                    if (other != job && other->m_runner && other->m_benchCpu < 0)
                        other->m_runner->setCpus(m_parallelCpus);
                job->runCurrentStep(m_sandbox, {job->m_benchCpu}, m_parallelCpus);
            } else if (!exclusive && m_runningParallel < m_parallelSlots) {
                m_waiting.removeAt(i);
                ++m_runningParallel;
                // While a benchmark runs, other steps keep off its CPU; otherwise they may use all.
                job->runCurrentStep(m_sandbox, m_runningExclusive > 0 ? m_parallelCpus : QList<int>{});
            } else {
                ++i;
            }
        }
        return;
    }
    // One CPU: a benchmark waits for the parallel steps to drain and blocks new ones meanwhile.
    bool benchWaiting = false;
    for (qsizetype i = 0; i < m_waiting.size();) {
        EvalJob *job = m_waiting.at(i);
        if (!job->currentStep().exclusive) {
            ++i;
            continue;
        }
        benchWaiting = true;
        if (m_runningParallel == 0 && m_runningExclusive < m_benchSlots && acquireNodeBench()) {
            m_waiting.removeAt(i);
            ++m_runningExclusive;
            job->runCurrentStep(m_sandbox);
            continue;
        }
        ++i;
    }
    if (benchWaiting || m_runningExclusive > 0)
        return;
    for (qsizetype i = 0; i < m_waiting.size() && m_runningParallel < m_parallelSlots;) {
        EvalJob *job = m_waiting.at(i);
        m_waiting.removeAt(i);
        ++m_runningParallel;
        job->runCurrentStep(m_sandbox);
    }
}

} // namespace autocomp
