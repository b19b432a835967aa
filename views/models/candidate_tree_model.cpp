#include "models/candidate_tree_model.h"
#include "live/shown_run.h"

#include "common/status_palette.h"
#include "common/value_format.h"

#include <QFont>
#include <QGuiApplication>
#include <QPalette>

#include <algorithm>
#include <limits>

namespace autocomp {

CandidateTreeModel::CandidateTreeModel(QObject *parent) : QAbstractItemModel(parent) {}

void CandidateTreeModel::setMetric(const QString &metric, const QString &unit)
{
    if (m_metric == metric && m_metricUnit == unit)
        return;
    m_metric = metric;
    m_metricUnit = unit;
    if (!m_nodes.isEmpty())
        emitSpeedupChanged(-1);
}

void CandidateTreeModel::clear() { setCandidates({}); }

void CandidateTreeModel::setCandidates(const QList<Candidate> &candidates)
{
    beginResetModel();
    m_nodes.clear();
    m_topLevel.clear();
    m_nodeOfId.clear();
    m_rootNode = -1;

    QList<Candidate> sorted = candidates;
    std::stable_sort(sorted.begin(), sorted.end(), [](const Candidate &a, const Candidate &b) { return a.id < b.id; });
    m_nodes.reserve(sorted.size());
    for (const Candidate &candidate : std::as_const(sorted)) {
        m_nodeOfId.insert(candidate.id, m_nodes.size());
        m_nodes.append(Node{candidate, -1, {}, 0});
    }
    // Linked after all are known, so the order of the input does not matter.
    for (int node = 0; node < m_nodes.size(); ++node) {
        const int parentNode = parentNodeOf(m_nodes.at(node).candidate);
        m_nodes[node].parent = parentNode;
        m_nodes[node].row = int(childrenOf(parentNode).size());
        childrenOf(parentNode).append(node);
        const Candidate &candidate = m_nodes.at(node).candidate;
        if (candidate.parentId == 0
            && (m_rootNode < 0
                || (candidate.origin == CandidateOrigin::Root
                    && m_nodes.at(m_rootNode).candidate.origin != CandidateOrigin::Root)))
            m_rootNode = node;
    }
    endResetModel();
}

void CandidateTreeModel::upsertCandidates(const QList<Candidate> &candidates)
{
    for (const Candidate &candidate : candidates)
        upsertCandidate(candidate);
}

void CandidateTreeModel::upsertCandidate(const Candidate &candidate)
{
    const auto known = m_nodeOfId.constFind(candidate.id);
    if (known != m_nodeOfId.constEnd()) {
        const int node = *known;
        const double oldScore = m_nodes.at(node).candidate.score;
        m_nodes[node].candidate = candidate;
        const int row = rowOf(node);
        Q_EMIT dataChanged(createIndex(row, 0, quintptr(node)), createIndex(row, ColumnCount - 1, quintptr(node)));
        const bool scoreChanged = !(oldScore == candidate.score
                                    || (std::isnan(oldScore) && std::isnan(candidate.score)));
        if (node == m_rootNode && scoreChanged)
            emitSpeedupChanged(-1);
        return;
    }

    const int node = m_nodes.size();
    const int parentNode = parentNodeOf(candidate);
    const QModelIndex parentIndex = parentNode < 0 ? QModelIndex()
                                                   : createIndex(rowOf(parentNode), 0, quintptr(parentNode));
    const int row = childrenOf(parentNode).size();
    beginInsertRows(parentIndex, row, row);
    m_nodes.append(Node{candidate, parentNode, {}, int(row)});
    m_nodeOfId.insert(candidate.id, node);
    childrenOf(parentNode).append(node);
    endInsertRows();

    adoptOrphans(node);
    if (candidate.parentId == 0 && (m_rootNode < 0 || candidate.origin == CandidateOrigin::Root)) {
        m_rootNode = node;
        emitSpeedupChanged(-1);
    }
}

void CandidateTreeModel::adoptOrphans(int node)
{
    const qint64 id = m_nodes.at(node).candidate.id;
    for (int row = m_topLevel.size() - 1; row >= 0; --row) {
        const int orphan = m_topLevel.at(row);
        if (orphan == node || m_nodes.at(orphan).candidate.parentId != id)
            continue;
        const QModelIndex destination = createIndex(rowOf(node), 0, quintptr(node));
        const int destinationRow = m_nodes.at(node).children.size();
        beginMoveRows({}, row, row, destination, destinationRow);
        m_topLevel.removeAt(row);
        for (qsizetype later = row; later < m_topLevel.size(); ++later)
            m_nodes[m_topLevel.at(later)].row = int(later);
        m_nodes[orphan].parent = node;
        m_nodes[orphan].row = destinationRow;
        m_nodes[node].children.append(orphan);
        endMoveRows();
    }
}

void CandidateTreeModel::emitSpeedupChanged(int node)
{
    const QList<int> &children = childrenOf(node);
    if (children.isEmpty())
        return;
    const QModelIndex parentIndex = node < 0 ? QModelIndex() : createIndex(rowOf(node), 0, quintptr(node));
    Q_EMIT dataChanged(index(0, ScoreColumn, parentIndex), index(children.size() - 1, SpeedupColumn, parentIndex));
    for (int child : children)
        emitSpeedupChanged(child);
}

const QList<int> &CandidateTreeModel::childrenOf(int node) const
{
    return node < 0 ? m_topLevel : m_nodes.at(node).children;
}

QList<int> &CandidateTreeModel::childrenOf(int node) { return node < 0 ? m_topLevel : m_nodes[node].children; }

int CandidateTreeModel::rowOf(int node) const { return m_nodes.at(node).row; }

int CandidateTreeModel::parentNodeOf(const Candidate &candidate) const
{
    if (candidate.parentId == 0 || candidate.parentId == candidate.id)
        return -1;
    return m_nodeOfId.value(candidate.parentId, -1);
}

void CandidateTreeModel::setShownRun(const ShownRun *run)
{
    connect(run, &ShownRun::shown, this, [this, run](const QList<Candidate> &candidates) {
        if (run->id() == 0) {
            clear();
            return;
        }
        setMetric(run->run().metric, run->run().metricUnit);
        setCandidates(candidates);
    });
    connect(run, &ShownRun::candidatesChanged, this,
            [this](const QList<Candidate> &candidates) { upsertCandidates(candidates); });
}

qint64 CandidateTreeModel::rootCandidateId() const { return m_rootNode < 0 ? 0 : m_nodes.at(m_rootNode).candidate.id; }

double CandidateTreeModel::rootScore() const
{
    return m_rootNode < 0 ? std::numeric_limits<double>::quiet_NaN() : m_nodes.at(m_rootNode).candidate.score;
}

QModelIndex CandidateTreeModel::indexOfCandidate(qint64 candidateId, int column) const
{
    const int node = m_nodeOfId.value(candidateId, -1);
    if (node < 0)
        return {};
    return createIndex(rowOf(node), column, quintptr(node));
}

const Candidate *CandidateTreeModel::candidate(const QModelIndex &index) const
{
    if (!index.isValid() || index.model() != this)
        return nullptr;
    return &m_nodes.at(int(index.internalId())).candidate;
}

QModelIndex CandidateTreeModel::index(int row, int column, const QModelIndex &parent) const
{
    if (column < 0 || column >= ColumnCount || row < 0)
        return {};
    const QList<int> &children = childrenOf(parent.isValid() ? int(parent.internalId()) : -1);
    if (row >= children.size())
        return {};
    return createIndex(row, column, quintptr(children.at(row)));
}

QModelIndex CandidateTreeModel::parent(const QModelIndex &child) const
{
    if (!child.isValid())
        return {};
    const int parentNode = m_nodes.at(int(child.internalId())).parent;
    if (parentNode < 0)
        return {};
    return createIndex(rowOf(parentNode), 0, quintptr(parentNode));
}

int CandidateTreeModel::rowCount(const QModelIndex &parent) const
{
    if (parent.isValid() && parent.column() != 0)
        return 0;
    return childrenOf(parent.isValid() ? int(parent.internalId()) : -1).size();
}

int CandidateTreeModel::columnCount(const QModelIndex &) const { return ColumnCount; }

QVariant CandidateTreeModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const Node &node = m_nodes.at(int(index.internalId()));
    const Candidate &c = node.candidate;
    // A child within noise of its parent: the difference is no improvement, shown muted with the reason.
    const Candidate *parentCandidate = node.parent >= 0 ? &m_nodes.at(node.parent).candidate : nullptr;
    const bool noise = parentCandidate && (index.column() == ScoreColumn || index.column() == SpeedupColumn)
        && withinNoise(c, *parentCandidate);
    const double base = rootScore();
    const double speedup = c.hasScore() && c.score > 0 && base > 0 ? base / c.score
                                                                   : std::numeric_limits<double>::quiet_NaN();
    const QString model = c.codeModel.isEmpty() ? c.planModel : c.codeModel;

    switch (role) {
    case CandidateIdRole: return c.id;
    case ParentIdRole: return c.parentId;
    case StatusRole: return static_cast<int>(c.status);
    case InBeamRole: return c.inBeam;
    case SortRole:
        switch (index.column()) {
        case IdColumn: return c.id;
        case IterationColumn: return c.iteration;
        case OriginColumn: return toString(c.origin);
        case StatusColumn: return static_cast<int>(c.status);
        case MenuItemColumn: return c.menuItem;
        // Unscored candidates sort after every scored one.
        case ScoreColumn: return c.hasScore() ? c.score : std::numeric_limits<double>::infinity();
        case SpeedupColumn: return std::isnan(speedup) ? 0.0 : speedup;
        case ModelColumn: return model;
        }
        break;
    case Qt::DisplayRole:
        switch (index.column()) {
        case IdColumn: return c.id;
        case IterationColumn: return c.iteration;
        case OriginColumn: return toString(c.origin);
        case StatusColumn: return statusWord(c);
        case MenuItemColumn: return c.menuItem.section(QLatin1Char('\n'), 0, 0);
        case ScoreColumn: return ValueFormat::score(c.score, m_metric, m_metricUnit);
        case SpeedupColumn:
            return noise ? QStringLiteral("≈ ") + ValueFormat::speedup(speedup) : ValueFormat::speedup(speedup);
        case ModelColumn: return model;
        }
        break;
    case Qt::ToolTipRole:
        if (noise)
            return tr("Within noise of its parent #%1: their 95 % intervals of the score overlap, so the difference is "
                      "no improvement")
                .arg(parentCandidate->id);
        switch (index.column()) {
        case MenuItemColumn: return c.menuItem.isEmpty() ? QVariant() : QVariant(c.menuItem);
        case ModelColumn:
            return tr("plan: %1\ncode: %2")
                .arg(c.planModel.isEmpty() ? tr("none") : c.planModel,
                     c.codeModel.isEmpty() ? tr("none") : c.codeModel);
        default:
            if (!c.error.isEmpty())
                return c.error;
            if (c.inBeam)
                return tr("In the current beam");
        }
        break;
    case Qt::DecorationRole:
        if (index.column() == IdColumn)
            return StatusPalette::icon(c.status, QGuiApplication::palette());
        break;
    case Qt::ForegroundRole:
        if (noise)
            return QGuiApplication::palette().color(QPalette::Disabled, QPalette::Text);
        if (index.column() == StatusColumn) {
            const QColor color = StatusPalette::foreground(c.status, QGuiApplication::palette());
            if (color.isValid())
                return color;
        }
        break;
    case Qt::FontRole:
        if (c.inBeam) {
            QFont font;
            font.setBold(true);
            return font;
        }
        break;
    case Qt::TextAlignmentRole:
        switch (index.column()) {
        case IterationColumn:
        case ScoreColumn:
        case SpeedupColumn: return static_cast<int>(Qt::AlignRight | Qt::AlignVCenter);
        }
        break;
    }
    return {};
}

QVariant CandidateTreeModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractItemModel::headerData(section, orientation, role);
    switch (section) {
    case IdColumn: return tr("Candidate");
    case IterationColumn: return tr("Iter");
    case OriginColumn: return tr("Origin");
    case StatusColumn: return tr("Status");
    case MenuItemColumn: return tr("Optimization");
    case ScoreColumn: return tr("Score");
    case SpeedupColumn: return tr("Speedup");
    case ModelColumn: return tr("Model");
    }
    return {};
}

QList<qint64> CandidateTreeModel::beamIds() const
{
    QList<qint64> ids;
    for (const Node &node : m_nodes)
        if (node.candidate.inBeam)
            ids << node.candidate.id;
    return ids;
}

QList<qint64> CandidateTreeModel::inFlightIds() const
{
    QList<qint64> ids;
    for (const Node &node : m_nodes)
        if (!isFinal(node.candidate.status) && node.candidate.status != CandidateStatus::Cancelled)
            ids << node.candidate.id;
    return ids;
}

qint64 CandidateTreeModel::lastCandidateId() const
{
    qint64 last = 0;
    for (auto it = m_nodeOfId.cbegin(); it != m_nodeOfId.cend(); ++it)
        last = std::max(last, it.key());
    return last;
}

} // namespace autocomp
