// The Evaluator (evaluator.h): its slots and their scheduling (parallel steps, exclusive benchmarks on their
// reserved CPUs, the node-wide bench lock, remote slots), the setup steps run once per machine, and the start
// of each evaluation. The jobs themselves: eval_job.cpp; how steps become commands: step_commands.cpp.
#include "eval/evaluator.h"
#include "platform/data_paths.h"
#include "eval/process_runner.h"
#include "platform/sandbox.h"
#include "eval/remote_executor.h"

#include <QDir>
#include <QDirIterator>
#include <QFileInfo>
#include <QSet>
#include <QFile>
#include <QLockFile>
#include <QTimer>
#include <QLoggingCategory>
#include <QThread>

#include <algorithm>
#include <fcntl.h>
#include <sched.h>
#include <sys/file.h>
#include <unistd.h>

#include <utility>

Q_LOGGING_CATEGORY(lcEval, "autocomp.eval")

namespace autocomp {

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
                    // A shipped target's setup fails for a missing package; a target of the user's own may also
                    // name a path of its own wrongly (the kit beside the shipped targets, not beside it).
                    const bool shipped = QDir::cleanPath(s.target.dir)
                                             .startsWith(QDir::cleanPath(DataPaths::shippedDataDir())
                                                         + QLatin1Char('/'));
                    const QString hint = shipped
                        ? QStringLiteral("a missing package: packaging/install-deps.sh --runtime")
                        : QStringLiteral("a missing package, or a path in %1/backend.yaml that does not exist; a "
                                         "target outside the shipped folder reaches the judge kit as {kit_dir}")
                              .arg(s.target.dir);
                    const QString why =
                        QStringLiteral(
                            "setup of target '%1' (problem '%2') failed: its step '%3' %4. This is a problem of this "
                            "machine or of the target's installation, not of the code being evaluated: no verdict "
                            "about it. Fix what the step's output below names (%7), then evaluate again (autocomp "
                            "eval --target %1 --problem %2 --start repeats the setup).\n--- output of '%3': %5 ---\n%6")
                            .arg(s.target.name, s.problem.name, step.name, how, command.join(QLatin1Char(' ')),
                                 result.log.isEmpty() ? QStringLiteral("(none)") : result.log, hint);
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
