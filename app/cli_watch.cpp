// `autocomp runs watch RUN_ID`: a line per event of the run as the store shows it, whichever process drives
// it, until it ends; the exit status is the run's (0 finished, 3 failed, 4 stopped, or paused or interrupted
// with no process left to drive it).
#include "cli_commands.h"
#include "cli_common.h"
#include "cli_run_control.h"

#include "model/run_config.h"
#include "store/store_follower.h"

#include <QDateTime>
#include <QEventLoop>
#include <QJsonDocument>
#include <QTimer>

namespace autocomp::cli {

namespace {

// How long a run may stay without a driver before the watch ends: a `resume` started at the same time as
// the watch takes it over within that time.
constexpr int UndrivenGraceMs = 5000;

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

// One watch: the run as last read, its driver, the candidates seen so far; prints a line (or a JSON object
// with --json) per event the StoreFollower reports, until the run ends or is left without a driver.
class RunWatch
{
public:
    RunWatch(RunStore &store, const RunInfo &run, bool json);

    // The first line; the exit status when the run has ended already, else nullopt.
    std::optional<int> start();
    // Follows the run until it ends; the exit status.
    int follow();

private:
    void line(const QString &text, const QJsonObject &o);
    QJsonObject runEvent(const RunInfo &r, const QString &event, const std::optional<RunLease> &lease) const;
    QString score(double value) const;
    // Whether the run has ended for a watcher: over, or left with nobody to drive it.
    std::optional<int> verdict(const RunInfo &r, const std::optional<RunLease> &l);
    void check(const RunInfo &r);
    void onChanged(const StoreChanges &changes);
    void printCandidates(const QList<Candidate> &candidates);
    void printRequests(const QList<RunRequest> &requests);
    void printRuns(const QList<RunSnapshot> &runs);

    RunStore &m_store;
    const qint64 m_runId;
    const bool m_json;
    const QString m_unit;
    int m_iterations = 0;
    std::optional<RunLease> m_lease;
    QHash<qint64, CandidateStatus> m_known;
    qint64 m_lastId = 0;
    QDateTime m_loadedAt;
    RunInfo m_last;
    QEventLoop m_loop;
    int m_exitCode = ExitError;
    QTimer m_undriven;
};

RunWatch::RunWatch(RunStore &store, const RunInfo &run, bool json)
    : m_store(store)
    , m_runId(run.id)
    , m_json(json)
    , m_unit(runUnit(run))
    , m_last(run)
{
    QStringList ignored;
    const auto config = RunConfig::fromYaml(run.configYaml.toUtf8(),
                                            QStringLiteral("run %1's configuration").arg(m_runId), &ignored);
    m_iterations = config ? config->search.iterations : 0;
}

void RunWatch::line(const QString &text, const QJsonObject &o)
{
    if (m_json)
        out() << QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact)) << '\n';
    else
        out() << QDateTime::currentDateTime().toString(QStringLiteral("HH:mm:ss")) << ' ' << text << '\n';
    out().flush();
}

QJsonObject RunWatch::runEvent(const RunInfo &r, const QString &event, const std::optional<RunLease> &lease) const
{
    QJsonObject o = runJson(r);
    o.insert(QStringLiteral("event"), event);
    o.insert(QStringLiteral("driver"), leaseText(lease));
    return o;
}

QString RunWatch::score(double value) const
{
    return QStringLiteral("%1 %2").arg(QString::number(value, 'g', 4), m_unit);
}

std::optional<int> RunWatch::start()
{
    const RunInfo &run = m_last;
    m_lease = m_store.lease(m_runId);
    m_loadedAt = QDateTime::currentDateTimeUtc();
    for (const Candidate &c : m_store.candidates(m_runId)) {
        m_known.insert(c.id, c.status);
        m_lastId = std::max(m_lastId, c.id);
    }
    line(QStringLiteral("run %1: %2/%3, %4, driven by %5, iteration %6/%7, %8 candidates so far")
             .arg(m_runId)
             .arg(run.target, run.problem, m_store.displayState(run), leaseText(m_lease))
             .arg(run.iteration)
             .arg(m_iterations)
             .arg(m_known.size()),
         runEvent(run, QStringLiteral("watching"), m_lease));
    if (hasEnded(run.state))
        return *verdict(run, m_lease);
    return std::nullopt;
}

std::optional<int> RunWatch::verdict(const RunInfo &r, const std::optional<RunLease> &l)
{
    const bool driven = l && l->alive;
    if (hasEnded(r.state)) {
        line(QStringLiteral("run %1 %2 (%3)%4")
                 .arg(r.id)
                 .arg(toString(r.state), r.stopReason,
                      r.bestCandidateId
                          ? QStringLiteral(": best %1 vs %2, %3x, candidate %4")
                                .arg(score(r.bestScore), score(r.baselineScore), QString::number(r.speedup(), 'f', 2))
                                .arg(r.bestCandidateId)
                          : QString()),
             runEvent(r, QStringLiteral("ended"), l));
        return runExitCode(r);
    }
    if (!driven) {
        line(QStringLiteral("run %1 %2 and no process drives it; `autocomp resume %1` continues it")
                 .arg(r.id)
                 .arg(r.state == RunState::Paused ? QStringLiteral("paused") : QStringLiteral("interrupted")),
             runEvent(r, r.state == RunState::Paused ? QStringLiteral("paused") : QStringLiteral("interrupted"), l));
        return RunExitStopped;
    }
    return std::nullopt;
}

void RunWatch::check(const RunInfo &r)
{
    const bool driven = m_lease && m_lease->alive;
    if (hasEnded(r.state)) {
        m_exitCode = *verdict(r, m_lease);
        m_loop.quit();
    } else if (!driven && !m_undriven.isActive()) {
        m_undriven.start();
    } else if (driven) {
        m_undriven.stop();
    }
}

int RunWatch::follow()
{
    StoreFollower follower(m_store.path());
    // A run left without a driver (paused, interrupted) ends the watch once it stays so for a while.
    m_undriven.setSingleShot(true);
    m_undriven.setInterval(UndrivenGraceMs);
    QObject::connect(&m_undriven, &QTimer::timeout, &m_loop, [this] {
        m_exitCode = *verdict(m_last, m_lease);
        m_loop.quit();
    });
    check(m_last);
    QObject::connect(&follower, &StoreFollower::failed, &m_loop, [this](const QString &error) {
        err() << "autocomp: " << error << Qt::endl;
        m_exitCode = ExitError;
        m_loop.quit();
    });
    QObject::connect(&follower, &StoreFollower::changed, &m_loop,
                     [this](const StoreChanges &changes) { onChanged(changes); });
    follower.follow(m_runId, m_loadedAt, m_lastId);
    m_loop.exec();
    return m_exitCode;
}

void RunWatch::onChanged(const StoreChanges &changes)
{
    if (changes.removedRuns.contains(m_runId)) {
        err() << "autocomp: run " << m_runId << " was deleted" << Qt::endl;
        m_exitCode = ExitError;
        m_loop.quit();
        return;
    }
    if (changes.followedRunId == m_runId)
        printCandidates(changes.candidates);
    printRequests(changes.requests);
    printRuns(changes.runs);
}

void RunWatch::printCandidates(const QList<Candidate> &candidates)
{
    for (const Candidate &c : candidates) {
        const auto before = m_known.constFind(c.id);
        const bool isNew = before == m_known.constEnd();
        const bool verdictNow = isFinal(c.status) && (isNew || !isFinal(*before));
        m_known.insert(c.id, c.status);
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
                    + (m_last.baselineScore > 0
                           ? QStringLiteral(" (%1x)").arg(QString::number(m_last.baselineScore / c.score, 'f', 2))
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
void RunWatch::printRequests(const QList<RunRequest> &requests)
{
    for (const RunRequest &request : requests) {
        if (request.runId != m_runId)
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
}

void RunWatch::printRuns(const QList<RunSnapshot> &runs)
{
    for (const RunSnapshot &snapshot : runs) {
        if (snapshot.run.id != m_runId)
            continue;
        const RunInfo &r = snapshot.run;
        const bool driverChanged = leaseText(snapshot.lease) != leaseText(m_lease);
        m_lease = snapshot.lease;
        if (r.state != m_last.state && !hasEnded(r.state))
            line(QStringLiteral("run %1 %2%3")
                     .arg(m_runId)
                     .arg(toString(r.state),
                          r.stopReason.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(r.stopReason)),
                 runEvent(r, QStringLiteral("state"), m_lease));
        if (driverChanged && m_lease && m_lease->alive)
            line(QStringLiteral("run %1 driven by %2").arg(m_runId).arg(leaseText(m_lease)),
                 runEvent(r, QStringLiteral("driver"), m_lease));
        if (r.iteration != m_last.iteration)
            line(QStringLiteral("iteration %1/%2 done: %3, %4 LLM calls, $%5")
                     .arg(r.iteration)
                     .arg(m_iterations)
                     .arg(r.bestCandidateId ? QStringLiteral("best %1 (%2x, candidate %3)")
                                                  .arg(score(r.bestScore), QString::number(r.speedup(), 'f', 2))
                                                  .arg(r.bestCandidateId)
                                            : QStringLiteral("no correct candidate yet"))
                     .arg(r.llmCalls)
                     .arg(QString::number(r.usd, 'f', 4)),
                 runEvent(r, QStringLiteral("iteration"), m_lease));
        m_last = r;
        check(r);
    }
}

} // namespace

int cmdWatch(RunStore &store, const Args &args)
{
    bool ok = false;
    const qint64 runId = args.positional.value(2).toLongLong(&ok);
    std::optional<RunInfo> run = ok ? store.run(runId) : std::nullopt;
    if (!run) {
        err() << "autocomp: no run '" << args.positional.value(2) << "' in " << store.path() << Qt::endl;
        return ExitError;
    }
    RunWatch watch(store, *run, args.flag(QStringLiteral("--json")));
    if (const std::optional<int> ended = watch.start())
        return *ended;
    return watch.follow();
}

} // namespace autocomp::cli
