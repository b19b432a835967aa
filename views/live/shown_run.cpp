#include "live/shown_run.h"

#include "catalog/repository.h"
#include "editors/code_highlighter.h"
#include "live/store_session.h"
#include "store/run_store.h"

#include <algorithm>

namespace autocomp {

namespace {

QString languageOfTarget(const QString &target)
{
    QString error;
    if (const std::optional<Target> known = Repository().target(target, &error))
        return known->language;
    return CodeHighlighter::languageForTarget(target);
}

bool live(RunState state) { return state == RunState::Running || state == RunState::Paused; }

} // namespace

ShownRun::ShownRun(StoreSession *session, QObject *parent) : QObject(parent), m_session(session)
{
    setObjectName(QStringLiteral("shownRun"));
    connect(m_session, &StoreSession::changed, this, &ShownRun::storeChanged);
}

RunStore *ShownRun::store() const { return m_session->store(); }

ShownRun::Driver ShownRun::driver() const
{
    if (m_run.id == 0)
        return Driver::Nobody;
    if (drivenHere())
        return Driver::ThisProcess;
    const std::optional<RunLease> lease = m_session->driverOf(m_run.id);
    return lease && lease->alive && !lease->isThisProcess() ? Driver::OtherProcess : Driver::Nobody;
}

const Candidate *ShownRun::find(qint64 id) const
{
    const auto it = m_candidates.constFind(id);
    return it == m_candidates.constEnd() ? nullptr : &*it;
}

std::optional<Candidate> ShownRun::lookup(qint64 id) const
{
    if (id == 0)
        return std::nullopt;
    if (const Candidate *c = find(id))
        return *c;
    return store()->candidate(id);
}

qint64 ShownRun::rootCandidateId() const
{
    qint64 root = 0;
    bool rootIsRoot = false;
    for (const Candidate &c : m_candidates) {
        if (c.parentId != 0)
            continue;
        const bool isRoot = c.origin == CandidateOrigin::Root;
        if (root == 0 || (isRoot && !rootIsRoot) || (isRoot == rootIsRoot && c.id < root)) {
            root = c.id;
            rootIsRoot = isRoot;
        }
    }
    return root;
}

bool ShownRun::show(qint64 runId)
{
    const std::optional<RunInfo> run = store()->run(runId);
    if (!run)
        return false;
    m_run = *run;
    m_language = languageOfTarget(m_run.target);
    m_selected = 0;
    m_backlog.clear(); // of the run shown before
    m_requestsInFlight = 0;
    m_evaluationsInFlight = 0;
    // Rows written from here on come through the follower (this read may miss them).
    m_loadedAt = QDateTime::currentDateTimeUtc();
    const QList<Candidate> candidates = settled(store()->candidates(runId));
    m_candidates.clear();
    for (const Candidate &c : candidates)
        m_candidates.insert(c.id, c);
    Q_EMIT shown(candidates);
    return true;
}

void ShownRun::clear()
{
    forget();
    Q_EMIT shown({});
}

void ShownRun::forget()
{
    m_run = {};
    m_candidates.clear();
    m_backlog.clear();
    m_selected = 0;
}

void ShownRun::updateRun(const RunInfo &run)
{
    if (run.id == 0 || run.id != m_run.id)
        return;
    m_run = run;
    Q_EMIT runChanged();
    settleInFlight();
}

void ShownRun::select(qint64 id)
{
    m_selected = id;
    if (const std::optional<Candidate> candidate = lookup(id))
        Q_EMIT candidateSelected(*candidate);
    else
        Q_EMIT selectionCleared();
}

void ShownRun::applyEngineCandidates(qint64 runId, const QList<Candidate> &candidates)
{
    if (runId == m_run.id && runId != 0)
        apply(candidates);
}

void ShownRun::applyEngineBeam(qint64 runId, const QList<qint64> &beam)
{
    if (runId != m_run.id || runId == 0)
        return;
    QList<Candidate> changed;
    for (const Candidate &c : std::as_const(m_candidates))
        if (c.inBeam != beam.contains(c.id)) {
            changed << c;
            changed.last().inBeam = !c.inBeam;
        }
    if (!changed.isEmpty())
        apply(changed);
}

void ShownRun::storeChanged(const StoreChanges &changes)
{
    if (m_run.id == 0 || drivenHere())
        return;
    for (const RunSnapshot &snapshot : changes.runs)
        if (snapshot.run.id == m_run.id)
            updateRun(snapshot.run);
    if (changes.followedRunId != m_run.id)
        return;
    m_requestsInFlight = changes.requestsInFlight;
    m_evaluationsInFlight = changes.evaluationsInFlight;
    if (!changes.candidates.isEmpty()) {
        // Handed out in slices, one per turn of the event loop: a big burst (a long-unfollowed run catching up)
        // never holds the window for long.
        const bool idle = m_backlog.isEmpty();
        for (const Candidate &c : changes.candidates) {
            // The follower sends again the rows written just before the run was read: those shown as they are are
            // not news (while a backlog waits, a row is compared with nothing: an older version may be queued).
            const Candidate *shown = idle ? find(c.id) : nullptr;
            if (!(shown && shown->sameContent(c)))
                m_backlog << c;
        }
        if (idle && !m_backlog.isEmpty())
            QMetaObject::invokeMethod(this, &ShownRun::applyBacklog, Qt::QueuedConnection);
    }
    // The inspector shows the selected candidate's calls and evaluation steps: shown again when they changed.
    const bool reshown = std::any_of(changes.candidates.cbegin(), changes.candidates.cend(),
                                     [this](const Candidate &c) { return c.id == m_selected; });
    if (m_selected != 0 && !reshown) {
        const Candidate *selected = find(m_selected);
        if (changes.touchedCandidates.contains(m_selected)
            || (selected && changes.touchedCalls.contains(selected->planCallId)))
            select(m_selected);
    }
}

void ShownRun::applyBacklog()
{
    if (m_backlog.isEmpty())
        return;
    const qsizetype n = std::min<qsizetype>(m_backlog.size(), CandidatesPerTurn);
    const QList<Candidate> slice = m_backlog.first(n);
    m_backlog.remove(0, n);
    apply(slice);
    if (!m_backlog.isEmpty())
        QMetaObject::invokeMethod(this, &ShownRun::applyBacklog, Qt::QueuedConnection);
}

void ShownRun::apply(const QList<Candidate> &unsettled)
{
    const QList<Candidate> candidates = settled(unsettled);
    const qsizetype before = m_candidates.size();
    for (const Candidate &c : candidates)
        m_candidates.insert(c.id, c);
    Q_EMIT candidatesChanged(candidates, m_candidates.size() != before);
    if (std::any_of(candidates.cbegin(), candidates.cend(), [this](const Candidate &c) { return c.id == m_selected; }))
        select(m_selected);
}

QList<Candidate> ShownRun::settled(QList<Candidate> candidates) const
{
    if (live(m_run.state))
        return candidates;
    for (Candidate &c : candidates)
        if (!isFinal(c.status) && c.status != CandidateStatus::Cancelled)
            c.status = CandidateStatus::Cancelled;
    return candidates;
}

void ShownRun::settleInFlight()
{
    if (live(m_run.state))
        return;
    QList<Candidate> changed;
    for (const Candidate &c : std::as_const(m_candidates))
        if (!isFinal(c.status) && c.status != CandidateStatus::Cancelled)
            changed << store()->candidate(c.id).value_or(c); // the store may hold its verdict by now
    if (!changed.isEmpty())
        apply(changed);
}

} // namespace autocomp
