// BeamGraphView's layout: the order of each iteration's column, the collapsed groups of pruned and failed
// subtrees, the edges and the scene's bounds. The class is declared in beam_graph_view.h.
#include "charts/beam_graph_view.h"

#include "charts/beam_graph_edges.h"
#include "charts/beam_graph_grid.h"
#include "charts/beam_graph_nodes.h"

#include <QFutureWatcher>
#include <QSignalBlocker>
#include <QToolButton>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>

namespace autocomp {

using namespace beam_graph;

QList<int> BeamGraphView::columnOrder(const QList<LayoutKey> &nodes)
{
    // Within a column, children sit in the order of their parents so that edges cross as little as a
    // one-pass layout allows. Columns are iterations; the result lists node indexes column by column.
    QList<int> order(nodes.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&nodes](int a, int b) {
        const LayoutKey &x = nodes.at(a);
        const LayoutKey &y = nodes.at(b);
        return x.iteration != y.iteration ? x.iteration < y.iteration : x.id < y.id;
    });
    QHash<qint64, int> rowOfId;
    rowOfId.reserve(nodes.size());
    for (qsizetype begin = 0; begin < order.size();) {
        const int iteration = nodes.at(order.at(begin)).iteration;
        qsizetype end = begin;
        while (end < order.size() && nodes.at(order.at(end)).iteration == iteration)
            ++end;
        std::stable_sort(order.begin() + begin, order.begin() + end, [&](int a, int b) {
            return rowOfId.value(nodes.at(a).parentId, std::numeric_limits<int>::max())
                < rowOfId.value(nodes.at(b).parentId, std::numeric_limits<int>::max());
        });
        for (qsizetype i = begin; i < end; ++i)
            rowOfId.insert(nodes.at(order.at(i)).id, int(i - begin));
        begin = end;
    }
    return order;
}

void BeamGraphView::applyOrder(const QList<int> &order)
{
    for (Node &node : m_nodes)
        node.column = -1;
    m_columns.clear();
    placeAtEnds(order);
}

void BeamGraphView::placeAtEnds(const QList<int> &indexes)
{
    // Each node goes to the end of its iteration's column.
    for (int index : indexes) {
        Node &node = m_nodes[index];
        node.column = std::max(0, node.iteration);
        if (m_columns.size() <= node.column)
            m_columns.resize(node.column + 1);
        node.row = int(m_columns.at(node.column).size());
        m_columns[node.column].append(index);
    }
}

void BeamGraphView::relayout(bool full)
{
    m_latestBeamIteration = -1;
    for (const Node &node : std::as_const(m_nodes))
        if (node.inBeam)
            m_latestBeamIteration = std::max(m_latestBeamIteration, node.iteration);
    updateBestPath();

    if (m_layoutPending)
        return; // the full layout on the thread pool places everything when it is done
    if (full) {
        QList<LayoutKey> keys;
        keys.reserve(m_nodes.size());
        for (const Node &node : std::as_const(m_nodes))
            keys.append({node.id, node.parentId, node.iteration});
        if (m_nodes.size() >= AsyncLayoutNodes) {
            // A big run: its columns are sorted on the thread pool; until then the view stays as it is.
            m_layoutPending = true;
            const qint64 generation = m_layoutGeneration;
            auto *watcher = new QFutureWatcher<QList<int>>(this);
            connect(watcher, &QFutureWatcher<QList<int>>::finished, this, [this, watcher, generation] {
                watcher->deleteLater();
                if (generation != m_layoutGeneration)
                    return; // cleared meanwhile
                m_layoutPending = false;
                applyOrder(watcher->result());
                relayout(false); // nodes that arrived meanwhile go to the end of their columns
                Q_EMIT layoutFinished();
            });
            watcher->setFuture(QtConcurrent::run(&BeamGraphView::columnOrder, keys));
            return;
        }
        applyOrder(columnOrder(keys));
    }
    QList<int> fresh;
    for (int i = 0; i < m_nodes.size(); ++i)
        if (m_nodes.at(i).column < 0)
            fresh.append(i);
    placeAtEnds(fresh);

    arrange();
}

bool BeamGraphView::collapsible(NodeState state)
{
    switch (state) {
    case NodeState::Pruned:
    case NodeState::Failed:
    case NodeState::CompileError:
    case NodeState::Incorrect:
    case NodeState::Duplicate:
    case NodeState::Cancelled:
    case NodeState::NoHardware: return true;
    default: return false;
    }
}

bool BeamGraphView::collapsesByDefault() const
{
    return m_collapseChosen ? m_collapseButton->isChecked() : m_nodes.size() > CollapseAbove;
}

void BeamGraphView::setCollapseByDefault(bool collapse)
{
    m_collapseChosen = true;
    m_collapseChoice.clear();
    {
        const QSignalBlocker blocker(m_collapseButton);
        m_collapseButton->setChecked(collapse);
    }
    flushPendingUpdates();
    arrange();
}

bool BeamGraphView::groupCollapsed(qint64 parentId, int members) const
{
    return members >= 2 && m_collapseChoice.value(parentId, collapsesByDefault());
}

void BeamGraphView::setGroupCollapsed(qint64 parentId, bool collapsed)
{
    flushPendingUpdates();
    m_collapseChoice.insert(parentId, collapsed);
    arrange();
}

void BeamGraphView::arrange()
{
    if (!m_collapseChosen) {
        const QSignalBlocker blocker(m_collapseButton);
        m_collapseButton->setChecked(collapsesByDefault());
    }
    // Kept: a node that is not pruned or failed, on the best path, a root, or above a kept one. Columns are walked
    // from the last, so a child marks its parent before the parent's column is reached.
    QList<char> keep(m_nodes.size(), 0);
    for (qsizetype c = m_columns.size() - 1; c >= 0; --c)
        for (int index : m_columns.at(c)) {
            const Node &node = m_nodes.at(index);
            const auto parent = m_nodeOfId.constFind(node.parentId);
            if (node.parentId == 0 || parent == m_nodeOfId.constEnd() || !collapsible(stateOf(node))
                || m_onBestPath.contains(node.id))
                keep[index] = 1;
            if (keep[index] && parent != m_nodeOfId.constEnd())
                keep[*parent] = 1;
        }
    // Each node that is not kept belongs to the group of its nearest kept ancestor.
    m_membersOf.clear();
    for (const QList<int> &column : std::as_const(m_columns))
        for (int index : column) {
            Node &node = m_nodes[index];
            node.groupParent = 0;
            if (keep.at(index))
                continue;
            const int parent = m_nodeOfId.value(node.parentId);
            if (keep.at(parent)) {
                node.groupParent = node.parentId;
                ++m_membersOf[node.parentId];
            } else {
                node.groupParent = m_nodes.at(parent).groupParent;
            }
        }
    // What is drawn: a collapsed group takes the place of its first node.
    m_groups.clear();
    m_groupOfParent.clear();
    m_shown = QList<QList<int>>(m_columns.size());
    for (int c = 0; c < m_columns.size(); ++c)
        for (int index : m_columns.at(c)) {
            Node &node = m_nodes[index];
            if (node.groupParent != 0 && groupCollapsed(node.groupParent, m_membersOf.value(node.groupParent))) {
                auto group = m_groupOfParent.constFind(node.groupParent);
                if (group == m_groupOfParent.constEnd()) {
                    group = m_groupOfParent.insert(node.groupParent, int(m_groups.size()));
                    m_groups.append(Group{node.groupParent, c, int(m_shown.at(c).size()), 0, 0, index});
                    m_shown[c].append(~*group);
                }
                Group &g = m_groups[*group];
                ++g.count;
                if (stateOf(node) == NodeState::Pruned)
                    ++g.pruned;
                node.row = -1;
                continue;
            }
            node.row = int(m_shown.at(c).size());
            m_shown[c].append(index);
        }
    // A selected node that a group now hides: its count node is selected instead.
    if (const auto it = m_nodeOfId.constFind(m_selected);
        m_selected > 0 && it != m_nodeOfId.constEnd() && m_nodes.at(*it).row < 0)
        m_selected = -m_nodes.at(*it).groupParent;
    else if (m_selected < 0 && !m_groupOfParent.contains(-m_selected))
        m_selected = 0;

    // The edges to count nodes first: new candidates then only add edges at the end of the list, which keeps the
    // image of the edges of a big run valid (BeamGraphEdges).
    QList<QLineF> edges;
    QList<QLineF> bestEdges;
    edges.reserve(m_nodes.size());
    for (const Group &group : std::as_const(m_groups))
        if (const auto parent = m_nodeOfId.constFind(group.parentId);
            parent != m_nodeOfId.constEnd() && m_nodes.at(*parent).row >= 0)
            edges.append(QLineF(centerOf(m_nodes.at(*parent)) + QPointF(s_nodeWidth / 2, 0),
                                centerOfGroup(group) - QPointF(s_nodeWidth / 2, 0)));
    qsizetype rows = 0;
    for (const QList<int> &column : std::as_const(m_shown))
        rows = std::max(rows, column.size());
    for (const Node &node : std::as_const(m_nodes)) {
        const auto parent = m_nodeOfId.constFind(node.parentId);
        if (node.parentId == 0 || parent == m_nodeOfId.constEnd() || node.row < 0 || node.column < 0
            || m_nodes.at(*parent).row < 0)
            continue;
        const QLineF line(centerOf(m_nodes.at(*parent)) + QPointF(s_nodeWidth / 2, 0),
                          centerOf(node) - QPointF(s_nodeWidth / 2, 0));
        edges.append(line);
        if (m_onBestPath.contains(node.id) && m_onBestPath.contains(node.parentId))
            bestEdges.append(line);
    }
    m_edges->setEdges(std::move(edges), std::move(bestEdges));

    // A tall graph grows in steps of an eighth: the fitted zoom, and with it the image of the edges, changes only
    // at a step, not with every new candidate of the tallest column.
    if (rows >= 64) {
        const auto step = std::max<qsizetype>(8, qsizetype(std::bit_floor(quint64(rows)) / 8));
        rows = (rows + step - 1) / step * step;
    }
    const QRectF bounds(-s_nodeWidth / 2 - 4, -s_nodeHeight / 2 - 4,
                        std::max<qsizetype>(0, m_columns.size() - 1) * s_columnPitch + s_nodeWidth + 8,
                        std::max<qsizetype>(0, rows - 1) * s_rowPitch + s_nodeHeight + 8);
    m_nodeLayer->setBounds(bounds);
    m_scene->setSceneRect(bounds.adjusted(-40, -40, 40, 40));
    if (m_autoFit && !m_nodes.isEmpty())
        fitAll();
}

QPointF BeamGraphView::centerOfGroup(const Group &group) const
{
    return QPointF(group.column * s_columnPitch, group.row * s_rowPitch);
}

QList<qint64> BeamGraphView::collapsedGroups() const
{
    QList<qint64> parents;
    for (const Group &group : m_groups)
        parents.append(group.parentId);
    return parents;
}

int BeamGraphView::hiddenCount(qint64 parentId) const
{
    const auto it = m_groupOfParent.constFind(parentId);
    return it == m_groupOfParent.constEnd() ? 0 : m_groups.at(*it).count;
}

QString BeamGraphView::groupLabel(qint64 parentId) const
{
    const auto it = m_groupOfParent.constFind(parentId);
    return it == m_groupOfParent.constEnd() ? QString() : groupText(m_groups.at(*it), false);
}

QPointF BeamGraphView::groupPosition(qint64 parentId) const
{
    const auto it = m_groupOfParent.constFind(parentId);
    return it == m_groupOfParent.constEnd() ? QPointF() : centerOfGroup(m_groups.at(*it));
}

bool BeamGraphView::isHidden(qint64 candidateId) const
{
    const auto it = m_nodeOfId.constFind(candidateId);
    return it != m_nodeOfId.constEnd() && m_nodes.at(*it).column >= 0 && m_nodes.at(*it).row < 0;
}

QString BeamGraphView::groupText(const Group &group, bool shortForm) const
{
    QString count = QStringLiteral("+%1").arg(group.count);
    if (shortForm)
        return count;
    if (group.pruned == group.count)
        return tr("%1 pruned").arg(count);
    if (group.pruned == 0)
        return tr("%1 failed").arg(count);
    return tr("%1 pruned or failed").arg(count);
}

QString BeamGraphView::groupTooltip(const Group &group) const
{
    return tr("<b>%n candidate(s) collapsed</b> under #%1: %2 pruned, %3 failed (incorrect, compile error, crash, "
              "timeout, duplicate…)<br>Click or Enter expands them; C on one of them collapses them again.",
              nullptr, group.count)
        .arg(group.parentId)
        .arg(group.pruned)
        .arg(group.count - group.pruned);
}

} // namespace autocomp
