// The run's lifecycle: the phases of RunLifecycle, and the SearchEngine functions that move a run through
// them (start, resume, pause, stop, the lease heartbeat, control requests from other processes, a store
// that fails, the end).
#include "search/run_lifecycle.h"

#include "eval/evaluator.h"
#include "model/run_lease.h"
#include "search/run_schedule.h"
#include "search/search_engine.h"
#include "store/run_store.h"

#include <QTimer>

#include <algorithm>

namespace autocomp {

bool RunLifecycle::allows(Phase from, Phase to)
{
    switch (from) {
    case Phase::Running: return to != Phase::Running && to != Phase::Paused;
    case Phase::Pausing: return to != Phase::Pausing;
    case Phase::Paused: return to != Phase::Paused && to != Phase::Pausing;
    case Phase::Draining: return to == Phase::Stopping || to == Phase::Halted || to == Phase::Ended;
    case Phase::Stopping: return to == Phase::Halted || to == Phase::Ended;
    case Phase::Halted: return to == Phase::Ended;
    case Phase::Ended: return false;
    }
    return false;
}

bool RunLifecycle::moveTo(Phase to, const QString &reason)
{
    if (!allows(m_phase, to)) {
        Q_ASSERT_X(false, "RunLifecycle::moveTo",
                   qPrintable(QStringLiteral("%1 -> %2 is not a move a run makes").arg(name(m_phase), name(to))));
        return false;
    }
    m_phase = to;
    m_reason = to == Phase::Draining || to == Phase::Halted ? reason : QString();
    return true;
}

bool RunLifecycle::heartbeatDue(int tickMs)
{
    const int ticks = qMax(1, RunLease::heartbeatIntervalMs() / qMax(1, tickMs));
    return ++m_heartbeatTick % ticks == 0;
}

QString RunLifecycle::name(Phase phase)
{
    switch (phase) {
    case Phase::Running: return QStringLiteral("running");
    case Phase::Pausing: return QStringLiteral("pausing");
    case Phase::Paused: return QStringLiteral("paused");
    case Phase::Draining: return QStringLiteral("draining");
    case Phase::Stopping: return QStringLiteral("stopping");
    case Phase::Halted: return QStringLiteral("halted");
    case Phase::Ended: return QStringLiteral("ended");
    }
    return {};
}

bool SearchEngine::open(QString *error)
{
    m_store = RunStore::open(m_setup.storePath, error);
    if (!m_store)
        return false;
    m_evaluator = m_sharedEvaluator ? m_sharedEvaluator : new Evaluator(m_setup.config.evaluation, this);
    if (!m_evaluator->configurationError().isEmpty()) {
        *error = m_evaluator->configurationError();
        return false;
    }
    if (!m_setup.config.search.schedule.isEmpty()) {
        const auto schedule = RunSchedule::load(m_setup.config.search.schedule, m_store.get(), error);
        if (!schedule)
            return false;
        m_schedule = *schedule;
    }
    if (!m_evaluator->sandboxNote().isEmpty())
        log(m_evaluator->sandboxNote());
    m_ledger.reset(new PaidCallLedger(this, m_llm, m_store.get(), m_setup.config.llm, this)); // Owner is private
    m_controlTimer = new QTimer(this);
    m_controlTimer->setInterval(500);
    connect(m_controlTimer, &QTimer::timeout, this, &SearchEngine::pollControl);
    m_clock.start();
    return true;
}

bool SearchEngine::start(QString *error)
{
    assertOwnThread();
    if (!open(error))
        return false;
    m_run.target = m_setup.target.name;
    m_run.problem = m_setup.problem.name;
    m_run.agent = m_setup.agent.name;
    m_run.configYaml = QString::fromUtf8(m_setup.configYaml);
    m_run.state = RunState::Running;
    m_run.metric = m_setup.target.metric;
    m_run.metricUnit = m_setup.target.metricUnit;
    m_run.label = m_setup.label;
    m_run.createdAt = QDateTime::currentDateTimeUtc();
    Candidate root;
    root.iteration = 0;
    root.origin = CandidateOrigin::Root;
    root.status = CandidateStatus::Pending;
    root.code = m_setup.problem.startCode();
    // The run, its lease and its root in one commit: a kill leaves either no run or one that resumes.
    m_store->beginBatch();
    m_run.id = m_store->createRun(m_run);
    const bool leased = m_run.id && m_store->acquireLease(m_run.id, nullptr);
    const qint64 rootId = leased && !root.code.isEmpty() ? addCandidate(root) : 0;
    if (!m_store->endBatch(leased) || !m_run.id) {
        *error = QStringLiteral("cannot record the run: %1").arg(m_store->lastError());
        if (m_lifecycle.live()) // nothing of it was stored
            m_lifecycle.moveTo(RunLifecycle::Phase::Halted, m_store->lastError());
        return false;
    }
    if (root.code.isEmpty()) {
        *error = QStringLiteral("%1: the starting code is empty or unreadable").arg(m_setup.problem.startFile);
        finish(RunState::Failed, *error);
        return false;
    }
    if (m_setup.config.llm.reuseAcrossRuns)
        log(QStringLiteral(
            "answers paid for in other runs are reused for identical requests (llm.reuse_answers: across_runs)"));
    m_controlTimer->start();
    Q_EMIT runStateChanged(RunState::Running, {});
    if (!m_schedule.isEmpty())
        log(QStringLiteral("seeded with a schedule of %1 steps: %2")
                .arg(m_schedule.size())
                .arg(m_schedule.join(QLatin1String(" -> "))));
    log(QStringLiteral("run %1: %2/%3, evaluating the starting code").arg(m_run.id).arg(m_run.target, m_run.problem));
    ++m_outstanding;
    startWork([this, rootId] { evaluate(rootId); });
    return true;
}

bool SearchEngine::resume(qint64 runId, QString *error)
{
    assertOwnThread();
    if (!open(error))
        return false;
    const auto run = m_store->run(runId);
    if (!run) {
        *error = QStringLiteral("no run %1 in %2").arg(runId).arg(m_store->path());
        return false;
    }
    if (run->state == RunState::Failed) {
        *error = QStringLiteral("run %1 failed (%2); nothing to resume").arg(runId).arg(run->stopReason);
        return false;
    }
    if (run->state == RunState::Finished) {
        // Nothing left to do (e.g. it finished just before its process was killed): report it as it ended.
        m_run = *run;
        m_lifecycle.moveTo(RunLifecycle::Phase::Ended);
        log(QStringLiteral("run %1 has already finished (%2)").arg(runId).arg(run->stopReason));
        QMetaObject::invokeMethod(
            this, [this] { Q_EMIT finished(m_run); }, Qt::QueuedConnection);
        return true;
    }
    RunLease holder;
    if (!m_store->acquireLease(runId, &holder)) {
        *error = holder.held()
            ? QStringLiteral(
                  "run %1 is already being driven by %2; stop it first (autocomp stop %1) or wait for it to end")
                  .arg(runId)
                  .arg(holder.describe())
            : QStringLiteral("cannot take run %1's lease: %2").arg(runId).arg(m_store->lastError());
        return false;
    }
    // Requests a killed process had in flight never got an answer: kept apart as unconfirmed (maybe billed).
    const int unconfirmedBefore = int(m_store->unconfirmedCalls(runId).size());
    m_run = *run;
    m_run.state = RunState::Running;
    m_run.stopReason.clear();
    if (m_run.metricUnit.isEmpty() && m_run.metric == m_setup.target.metric)
        m_run.metricUnit = m_setup.target.metricUnit; // a run stored before units were (schema < 7)
    if (!m_store->settleInFlightCalls(runId) || !m_store->requestState(runId, {})) {
        *error = QStringLiteral("cannot resume run %1: %2").arg(runId).arg(m_store->lastError());
        m_store->releaseLease(runId);
        return false;
    }
    if (unconfirmedBefore > 0)
        log(QStringLiteral("%1 request(s) were in flight when run %2 was interrupted: their cost is unconfirmed (see "
                           "`autocomp runs show %2`)")
                .arg(unconfirmedBefore)
                .arg(runId));
    if (m_setup.config.llm.reuseAcrossRuns)
        log(QStringLiteral(
            "answers paid for in other runs are reused for identical requests (llm.reuse_answers: across_runs)"));
    for (const Candidate &c : m_store->candidates(runId)) {
        m_candidates.insert(c.id, c);
        if (c.origin == CandidateOrigin::Fix && c.fixOf > 0)
            m_fixAttempts.insert(c.id, m_fixAttempts.value(c.fixOf) + 1);
    }
    persistRun();
    m_controlTimer->start();
    Q_EMIT runStateChanged(RunState::Running, QStringLiteral("resumed"));

    Candidate root;
    for (const Candidate &c : std::as_const(m_candidates))
        if (c.origin == CandidateOrigin::Root)
            root = c;
    if (root.id == 0) {
        *error = QStringLiteral("run %1 has no starting candidate; start it anew").arg(runId);
        finish(RunState::Failed, *error);
        return false;
    }
    log(QStringLiteral("resuming run %1 after iteration %2 (%3 candidates stored)")
            .arg(runId)
            .arg(m_run.iteration)
            .arg(m_candidates.size()));
    if (!isFinal(root.status)) {
        ++m_outstanding;
        startWork([this, id = root.id] { evaluate(id); });
        return true;
    }
    if (root.status != CandidateStatus::Correct && !unmeasuredRun(root)) {
        finish(RunState::Failed, startFailure(root));
        return true;
    }
    if (root.hasScore())
        m_run.baselineScore = root.score;
    // The beam as of the last finished selection (in_beam is written at selection time only).
    QList<Candidate> beam;
    for (const Candidate &c : std::as_const(m_candidates))
        if (c.inBeam)
            beam << c;
    std::sort(beam.begin(), beam.end(), [](const Candidate &a, const Candidate &b) {
        return a.score < b.score || (a.score == b.score && a.id < b.id);
    });
    for (const Candidate &c : std::as_const(beam))
        m_beam << c.id;
    if (m_beam.isEmpty())
        m_beam = {root.id};
    // Translation ended early (translate_score) when the original already left the beam.
    m_translationDone = m_run.iteration >= m_setup.config.search.translateIters
        || (m_setup.config.search.translateScore && m_run.iteration > 0
            && std::none_of(m_beam.cbegin(), m_beam.cend(),
                            [this](qint64 id) { return m_candidates.value(id).origin == CandidateOrigin::Root; }));
    if (m_run.iteration >= m_setup.config.search.iterations) {
        finish(RunState::Finished, QStringLiteral("completed %1 iterations").arg(m_setup.config.search.iterations));
        return true;
    }
    m_bestBeforeIteration = m_run.bestScore;
    startIteration(m_run.iteration + 1, true);
    return true;
}

void SearchEngine::pause()
{
    assertOwnThread();
    if (m_lifecycle.phase() != RunLifecycle::Phase::Running)
        return;
    m_lifecycle.moveTo(RunLifecycle::Phase::Pausing);
    log(QStringLiteral("pausing: in-flight work finishes, nothing new starts"));
    checkPaused();
}

void SearchEngine::checkPaused()
{
    if (m_lifecycle.phase() != RunLifecycle::Phase::Pausing)
        return;
    if ((m_ledger && !m_ledger->idle()) || !m_jobs.isEmpty())
        return;
    m_lifecycle.moveTo(RunLifecycle::Phase::Paused);
    m_run.state = RunState::Paused;
    m_run.stopReason = QStringLiteral("paused");
    persistRun();
    log(QStringLiteral("run %1 paused (%2 steps waiting)").arg(m_run.id).arg(m_deferred.size()));
    Q_EMIT runStateChanged(RunState::Paused, m_run.stopReason);
}

void SearchEngine::resumeWork()
{
    assertOwnThread();
    if (!m_lifecycle.deferring())
        return;
    m_lifecycle.moveTo(RunLifecycle::Phase::Running);
    m_run.state = RunState::Running;
    m_run.stopReason.clear();
    persistRun();
    log(QStringLiteral("run %1 resumed").arg(m_run.id));
    Q_EMIT runStateChanged(RunState::Running, QStringLiteral("resumed"));
    const auto deferred = std::exchange(m_deferred, {});
    for (const auto &work : deferred)
        work();
}

void SearchEngine::pollControl()
{
    if (!m_store || !m_lifecycle.live())
        return;
    // The lease's heartbeat (every 5 s by default): other processes see that this run is driven (runs list, resume).
    if (m_lifecycle.heartbeatDue(m_controlTimer->interval()) && !m_store->heartbeat(m_run.id)) {
        storeFailed(QStringLiteral("renewing the run's lease"));
        return;
    }
    // A process stopped past the lease's timeout (SIGSTOP, a suspended machine) may find the run taken over:
    // it stops here, at the latest (its writes are refused anyway).
    if (!m_store->checkLease(m_run.id) && m_store->lostLease(m_run.id)) {
        leaseTakenOver();
        return;
    }
    takeRunRequests();
    const QString request = m_store->requestedState(m_run.id);
    if (request.isEmpty())
        return;
    m_store->requestState(m_run.id, {});
    if (request == QLatin1String("pause"))
        pause();
    else if (request == QLatin1String("resume"))
        resumeWork();
    else if (request == QLatin1String("stop"))
        stop(QStringLiteral("stopped on request"));
}

void SearchEngine::takeRunRequests()
{
    // Plans and edits written in a workbench that does not drive this run: taken as from this process's own window.
    for (const RunRequest &request : m_store->pendingRunRequests(m_run.id)) {
        QString error;
        const qint64 id = request.kind == RunRequest::Kind::Plan ? addHumanPlan(request.parentId, request.text, &error)
                                                                 : addHumanCode(request.parentId, request.text, &error);
        const QString from = QStringLiteral("pid %1 on %2").arg(request.fromPid).arg(request.fromHost);
        if (id)
            log(QStringLiteral("%1 from %2 taken (request %3)")
                    .arg(RunRequest::kindName(request.kind), from)
                    .arg(request.id));
        else
            log(QStringLiteral("%1 from %2 refused: %3 (request %4)")
                    .arg(RunRequest::kindName(request.kind), from, error)
                    .arg(request.id));
        if (!m_store->settleRunRequest(request.id, id, error)
            && !m_store->lastError().contains(QLatin1String("not pending"))) {
            storeFailed(QStringLiteral("recording what became of a plan or edit from another process"));
            return;
        }
    }
}

void SearchEngine::inBatch(const std::function<void()> &work)
{
    const bool outer = !m_store->inBatch();
    m_store->beginBatch();
    work();
    const bool committed = m_store->endBatch(true);
    if (!outer)
        return;
    const auto sends = m_ledger->takeHeldSends();
    const auto announcement = std::exchange(m_endAnnouncement, {});
    if (!committed) {
        if (announcement)
            endUnstored(m_store->lastError()); // the run ended inside the transaction that was lost
        else
            storeFailed(QStringLiteral("committing"));
        return;
    }
    if (announcement) {
        announcement();
        return;
    }
    if (!m_lifecycle.acting())
        return;
    for (const auto &send : sends)
        send();
    checkPaused();
}

void SearchEngine::cancelEvaluations()
{
    // Only this run's: a shared evaluator serves other runs too.
    const QList<QPointer<EvalJob>> jobs = m_jobs;
    for (const QPointer<EvalJob> &job : jobs)
        if (job)
            job->cancel();
}

void SearchEngine::cancelInFlight()
{
    // Outcomes of the cancelled work are not acted on from here (a halted or ended run acts on none already).
    if (m_lifecycle.acting())
        m_lifecycle.moveTo(RunLifecycle::Phase::Stopping);
    if (m_ledger)
        m_ledger->cancel();
    cancelEvaluations();
}

void SearchEngine::stop(const QString &reason)
{
    assertOwnThread();
    cancelAndFinish(RunState::Stopped, reason);
}

void SearchEngine::suspend(const QString &reason)
{
    assertOwnThread();
    cancelAndFinish(RunState::Paused, reason);
}

void SearchEngine::cancelAndFinish(RunState state, const QString &reason)
{
    if (m_lifecycle.ended())
        return;
    cancelInFlight();
    finish(state, reason);
}

void SearchEngine::storeFailed(const QString &what)
{
    if (m_store->lostLease(m_run.id)) {
        leaseTakenOver();
        return;
    }
    if (!m_lifecycle.live())
        return;
    m_lifecycle.moveTo(RunLifecycle::Phase::Halted, m_store->lastError());
    log(QStringLiteral("store write failed while %1: %2; pausing the run (nothing that was not stored is acted on)")
            .arg(what, m_lifecycle.reason()));
    // From the event loop: the handler that hit the failure unwinds first and its transaction is rolled back.
    QMetaObject::invokeMethod(
        this, [this] { cancelAndFinish(RunState::Paused, m_lifecycle.reason()); }, Qt::QueuedConnection);
}

void SearchEngine::leaseTakenOver()
{
    if (m_lostTo)
        return;
    m_lostTo = m_store->lostLease(m_run.id).value_or(RunLease());
    if (m_lifecycle.live()) // nothing is acted on or written any more
        m_lifecycle.moveTo(RunLifecycle::Phase::Halted, QStringLiteral("taken over by another process"));
    m_endAnnouncement = {};
    log(QStringLiteral("run %1 was taken over by another process while this one was not heard from (%2): "
                       "this process stops and leaves the run to it, writing nothing more")
            .arg(m_run.id)
            .arg(m_lostTo->held() ? QStringLiteral("now driven by %1").arg(m_lostTo->describe())
                                  : QStringLiteral("no process drives it now")));
    // From the event loop: the handler that hit the refused write unwinds first and its transaction is rolled back.
    QMetaObject::invokeMethod(
        this,
        [this] {
            cancelInFlight();
            if (!m_lifecycle.ended())
                m_lifecycle.moveTo(RunLifecycle::Phase::Ended);
            if (m_controlTimer)
                m_controlTimer->stop();
            Q_EMIT leaseLost(*m_lostTo);
            Q_EMIT finished(m_run);
        },
        Qt::QueuedConnection);
}

QString SearchEngine::failureOf() const
{
    int evaluated = 0;
    for (const Candidate &c : m_candidates)
        if (c.origin != CandidateOrigin::Root && !c.code.isEmpty() && isFinal(c.status))
            ++evaluated;
    if (evaluated > 0)
        return {};
    const int okCalls = m_ledger ? m_ledger->okCalls() : 0;
    const int failedCalls = m_ledger ? m_ledger->failedCalls() : 0;
    const QString lastError = m_ledger ? m_ledger->lastError() : QString();
    if (failedCalls > 0 && okCalls == 0)
        return QStringLiteral("every LLM call failed (%1 calls; the last: %2)").arg(failedCalls).arg(lastError);
    if (failedCalls > 0)
        return QStringLiteral("no candidate was evaluated: %1 of %2 LLM calls failed (the last: %3)")
            .arg(failedCalls)
            .arg(failedCalls + okCalls)
            .arg(lastError);
    // Say the most common reason the answers were unusable (e.g. every one cut at the output limit).
    QHash<QString, int> reasons;
    for (const Candidate &c : m_candidates)
        if (c.origin != CandidateOrigin::Root && c.code.isEmpty() && !c.error.isEmpty())
            ++reasons[c.error.section(QLatin1Char(';'), 0, 0)];
    const auto most = std::max_element(reasons.cbegin(), reasons.cend());
    if (most != reasons.cend())
        return QStringLiteral("no candidate was evaluated (no answer held usable code; %1 of them: %2)")
            .arg(*most)
            .arg(most.key());
    return QStringLiteral("no candidate was evaluated (no answer held usable code)");
}

void SearchEngine::finish(RunState state, const QString &reason)
{
    if (m_lifecycle.ended())
        return;
    const bool halted = m_lifecycle.phase() == RunLifecycle::Phase::Halted;
    if (halted && state != RunState::Paused)
        return; // only the store failure's own pause ends a halted run
    m_lifecycle.moveTo(RunLifecycle::Phase::Ended);
    if (m_controlTimer)
        m_controlTimer->stop();
    QString why = reason;
    if (state == RunState::Finished) {
        const QString failure = failureOf();
        if (!failure.isEmpty()) {
            state = RunState::Failed;
            why = failure;
        }
    }
    m_run.state = state;
    m_run.stopReason = why;
    // Candidates that never reached a verdict are marked, so the store never shows them as in progress.
    // A stopped or paused run can be resumed: its unfinished candidates are then done again.
    if (state != RunState::Stopped && state != RunState::Paused) {
        for (auto it = m_candidates.begin(); it != m_candidates.end(); ++it) {
            if (!isFinal(it->status)) {
                it->status = CandidateStatus::Failed;
                it->error = QStringLiteral("not finished: %1").arg(why);
                if (it->id > 0 && m_store)
                    m_store->updateCandidate(*it);
                Q_EMIT candidateUpdated(*it);
            }
        }
    }
    m_run.schedule = RunSchedule::of(m_candidates, m_run.bestCandidateId);
    bool stored = true;
    if (m_store && m_run.id) {
        // After a store failure this may fail again (the disk is still full): the run then shows as
        // interrupted once this process has ended, and resumes all the same.
        stored = m_store->updateRun(m_run);
        m_store->settleInFlightCalls(m_run.id);
        // Plans and edits sent from other processes and not taken yet will not be: said so, kept in the store.
        for (const RunRequest &request : m_store->pendingRunRequests(m_run.id))
            m_store->settleRunRequest(request.id, 0,
                                      QStringLiteral("the run has ended (%1)").arg(toString(m_run.state)));
        m_store->releaseLease(m_run.id);
    }
    if (m_store && m_store->lostLease(m_run.id)) {
        // Taken over by another process: none of the end was written, and none is announced.
        leaseTakenOver();
        return;
    }
    if (m_store && m_store->inBatch()) {
        // Announced once the enclosing transaction is committed (inBatch): an end that is not stored is not claimed.
        m_endAnnouncement = [this, state, why] { announceEnd(state, why); };
        return;
    }
    if (!stored && !halted)
        endUnstored(m_store->lastError());
    else
        announceEnd(state, why);
}

void SearchEngine::announceEnd(RunState state, const QString &reason)
{
    log(QStringLiteral("run %1 %2: %3").arg(m_run.id).arg(toString(state), reason));
    Q_EMIT runStateChanged(state, reason);
    Q_EMIT finished(m_run);
}

void SearchEngine::endUnstored(const QString &storeError)
{
    // The run's end could not be written: the store still says running (interrupted once this process is gone)
    // and `resume` completes it. Say so rather than claim an end the store does not show.
    log(QStringLiteral("the run's end (%1) could not be stored: %2").arg(toString(m_run.state), storeError));
    m_run.state = RunState::Paused;
    m_run.stopReason = storeError;
    announceEnd(RunState::Paused, storeError);
}

} // namespace autocomp
