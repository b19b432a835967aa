// A human in the loop: plans and code added by hand (from this process's window, or from another
// process through the store: takeRunRequests) join the current iteration and the next beam selection.
#include "search/search_engine.h"

#include "agents/response_parser.h"

namespace autocomp {

std::optional<Candidate> SearchEngine::humanChild(qint64 parentId, const QString &text, const QString &what,
                                                  QString *error) const
{
    if (m_lifecycle.ended())
        *error = QStringLiteral("the run has ended");
    else if (text.trimmed().isEmpty())
        *error = QStringLiteral("the %1 is empty").arg(what);
    else if (!m_candidates.contains(parentId))
        *error = QStringLiteral("no candidate %1 in this run").arg(parentId);
    else if (m_iteration == 0)
        *error = QStringLiteral("the starting code is still being evaluated");
    else
        error->clear();
    if (!error->isEmpty())
        return std::nullopt;
    Candidate c;
    c.parentId = parentId;
    c.iteration = m_iteration;
    c.origin = CandidateOrigin::Human;
    return c;
}

qint64 SearchEngine::addHumanPlan(qint64 parentId, const QString &plan, QString *error)
{
    assertOwnThread();
    std::optional<Candidate> child = humanChild(parentId, plan, QStringLiteral("plan"), error);
    if (!child)
        return 0;
    Candidate &c = *child;
    c.plan = plan;
    c.menuItem = ResponseParser::parseMenuChoice(plan, m_setup.agent.menu).text;
    c.planModel = QStringLiteral("human");
    c.status = CandidateStatus::Coding;
    qint64 first = 0;
    for (int k = 0; k < m_setup.config.search.codePerPlan; ++k) {
        c.sample = k;
        const qint64 id = addCandidate(c);
        first = first ? first : id;
        m_iterationCandidates << id;
        ++m_outstanding;
        startWork([this, id] { requestCode(id); });
    }
    log(QStringLiteral("human plan added under candidate %1 (candidates %2..)").arg(parentId).arg(first));
    return first;
}

qint64 SearchEngine::addHumanCode(qint64 parentId, const QString &code, QString *error)
{
    assertOwnThread();
    std::optional<Candidate> child = humanChild(parentId, code, QStringLiteral("code"), error);
    if (!child)
        return 0;
    Candidate &c = *child;
    c.code = code;
    c.plan = QStringLiteral("(code edited by hand)");
    c.codeModel = QStringLiteral("human");
    c.status = CandidateStatus::Pending;
    const qint64 id = addCandidate(c);
    m_iterationCandidates << id;
    ++m_outstanding;
    startWork([this, id] { evaluate(id); });
    log(QStringLiteral("human code added under candidate %1 (candidate %2)").arg(parentId).arg(id));
    return id;
}

} // namespace autocomp
