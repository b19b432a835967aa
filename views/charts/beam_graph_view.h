#pragma once

#include "model/candidate.h"

#include <QGraphicsView>
#include <QHash>
#include <QList>
#include <QSet>

#include <limits>
#include <optional>

class QGraphicsScene;
class QTimer;
class QToolButton;

namespace autocomp {

class BeamGraphEdges;
class BeamGraphNodes;
class ShownRun;

// The search as a graph: one column per iteration, an edge from each candidate to the one it was derived
// from, nodes colored by state and labelled with their speedup over the root. The beam and the path from
// the root to the best candidate stand out. Live updates are appended and laid out once per burst, so a
// stream of candidates costs one relayout per 50 ms however many arrive.
//
// Big runs stay readable. Labels are drawn in the view's own font, never scaled down, at the detail the node's
// box on screen has room for (labelDetail): the id, score and strategy; the id and score; the score alone. The
// score (speedup over the root) of a correct candidate is drawn at every zoom where a box is at least
// MinTextHeight pixels high; below that (far out, past the default fit) nodes are coloured blocks. Under each
// parent, the children whose whole subtree is pruned or failed (not on the best path, nothing in flight, none
// in the beam) collapse into one count node ("+17 pruned") once the run has more than CollapseAbove candidates,
// or always or never by the Collapse button; a click, Enter or its context action expands a count node, and C
// on one of the shown children collapses them again. The default fit never zooms out past the id-and-score
// detail: a graph larger than that is scrolled, centred on the best candidate.
//
// Defined in three files: beam_graph_view.cpp (the candidates, selection, keys and zoom), beam_graph_layout.cpp
// (columns, collapsed groups, edges) and beam_graph_painting.cpp (nodes, labels, legend).
class BeamGraphView : public QGraphicsView
{
    Q_OBJECT
public:
    // What a node's color says. Pruned: correct, but the beam selection of its iteration left it out.
    enum class NodeState {
        Planning,
        Coding,
        Compiling, // also waiting for an evaluation slot
        Testing,
        Benchmarking,
        Failed, // timeout, crash, rejected, error (machine), no code: told apart by the node's glyph
        CompileError,
        Incorrect,
        Correct, // correct, its beam selection has not happened yet
        InBeam,
        Duplicate, // not evaluated: the same code as an earlier candidate
        Cancelled, // in flight when the run stopped; redone on resume
        NoHardware,
        Pruned,
    };
    static constexpr int NodeStateCount = int(NodeState::Pruned) + 1;
    // What a node's label says at the current zoom, from the most to the least.
    enum class LabelDetail {
        Full, // "#id  score" and the strategy (or state) below
        IdAndScore, // "#id  score"
        ScoreOnly, // the score (a failed node: its glyph, if any)
        None, // a coloured block: the box is under MinTextHeight pixels high
    };
    static constexpr int MinTextHeight = 8;
    static constexpr int CollapseAbove = 40;

    explicit BeamGraphView(QWidget *parent = nullptr);
    ~BeamGraphView() override;

    // `bestCandidateId` 0: the correct candidate with the lowest score.
    void setCandidates(const QList<Candidate> &candidates, qint64 bestCandidateId = 0);
    // Follows `run`: its candidates (and best) when it is shown, each batch of changes, the selected candidate.
    void setShownRun(const ShownRun *run);
    void upsertCandidate(const Candidate &candidate);
    void upsertCandidates(const QList<Candidate> &candidates);
    void setBestCandidate(qint64 candidateId);
    void clear();

    // Selects the node without emitting candidateSelected (a candidate inside a collapsed group expands it);
    // false when the graph has no such candidate.
    bool selectCandidate(qint64 candidateId);
    // 0 while nothing or a count node is selected.
    qint64 selectedCandidate() const;
    // The parent whose count node is selected (keys walk onto count nodes too), or 0.
    qint64 selectedGroup() const { return m_selected < 0 ? -m_selected : 0; }
    // Where a key moves the selection: Left the parent, Right the first child, Up and Down the nodes above and
    // below in the same iteration, Home the root, End the run's best; 0 when there is nowhere to go, -P for the
    // count node of P's collapsed children.
    qint64 neighbour(int key);
    // The candidate whose node is under `viewportPos` (viewport coordinates), or 0 (a count node is no candidate).
    qint64 candidateAt(const QPoint &viewportPos) const;
    // The parent whose count node is under `viewportPos`, or 0.
    qint64 groupAt(const QPoint &viewportPos) const;

    // Collapsing. The parents whose pruned or failed children are drawn as one count node now.
    QList<qint64> collapsedGroups() const;
    // The candidates behind P's count node (its pruned or failed children and all below them); 0: none shown.
    int hiddenCount(qint64 parentId) const;
    // The count node's text ("+17 pruned", "+5 failed", "+22 pruned or failed"); empty when P has none.
    QString groupLabel(qint64 parentId) const;
    // The count node's center in scene coordinates; null when P has none.
    QPointF groupPosition(qint64 parentId) const;
    // Collapses or expands P's pruned and failed children (two at least, or nothing happens).
    void setGroupCollapsed(qint64 parentId, bool collapsed);
    // Whether groups collapse unless expanded one by one (the Collapse button); by default, above CollapseAbove.
    bool collapsesByDefault() const;
    void setCollapseByDefault(bool collapse);
    bool isHidden(qint64 candidateId) const;

    // Level of detail at the current zoom (the same for every node), and the lines the node's label has there.
    LabelDetail labelDetail() const;
    QStringList nodeText(qint64 candidateId) const;

    int nodeCount() const { return int(m_nodes.size()); }
    // Root first, best candidate last; empty when there is no correct candidate yet.
    QList<qint64> bestPath() const;
    bool isOnBestPath(qint64 candidateId) const;
    NodeState nodeState(qint64 candidateId) const;
    // The node's center in scene coordinates; null when unknown or hidden in a collapsed group. Valid after the
    // pending relayout.
    QPointF nodePosition(qint64 candidateId) const;
    // Lays out what upserts queued now rather than on the timer (tests, screenshots).
    void flushPendingUpdates();

    // The node's second line as drawn: the strategy's short name, with the state while it is not correct.
    QString nodeSubtitle(qint64 candidateId) const;
    // Search results: nodes outside `matches` are drawn faint; nullopt: none are.
    void setSearchMatches(const std::optional<QSet<qint64>> &matches);
    bool isDimmed(qint64 candidateId) const { return m_matches && !m_matches->contains(candidateId); }
    // The whole graph as a PNG or SVG file (by the suffix).
    bool exportImage(const QString &path, QString *error);

    static QString stateName(NodeState state);
    // A failure's kind, or a child within noise of its parent, as a glyph in the node's corner (empty: none).
    static QString glyphOf(const QString &word);
    static QColor stateColor(NodeState state, const QPalette &palette);

public Q_SLOTS:
    void zoomIn();
    void zoomOut();
    void fitAll();
    void exportClicked();

Q_SIGNALS:
    void candidateSelected(qint64 candidateId);
    // Enter on the selected node: open it (the inspector takes the focus).
    void candidateActivated(qint64 candidateId);
    // A full layout computed on the thread pool (a big run) has been applied.
    void layoutFinished();

protected:
    void showEvent(QShowEvent *event) override;
    void wheelEvent(QWheelEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    bool viewportEvent(QEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;

private:
    struct Node;
    struct Group
    {
        qint64 parentId = 0;
        int column = 0;
        int row = 0;
        int count = 0; // candidates behind it
        int pruned = 0;
        int first = -1; // the first hidden node, in layout order: selected when the group opens
    };
    friend class BeamGraphNodes;

    struct Node
    {
        qint64 id = 0;
        qint64 parentId = 0;
        int iteration = 0;
        CandidateStatus status = CandidateStatus::Planning;
        CandidateOrigin origin = CandidateOrigin::Llm;
        double score = 0;
        bool inBeam = false;
        QString word; // statusWord: what the node says of itself
        std::optional<ScoreInterval> interval;
        QString menuItem;
        QString shortName; // the strategy in a few words (PromptBuilder::shortName), drawn on the node
        int column = -1; // -1: not laid out yet
        int row = 0; // in its shown column; -1 while hidden in a collapsed group
        qint64 groupParent = 0; // a pruned or failed subtree: the kept ancestor whose count node may hide it
    };

    void store(const Candidate &candidate);
    bool isWithinNoise(const Node &node) const;
    void scheduleRelayout();
    // Full: sorts every column by parent order (a new run). Otherwise new nodes go to the end of their column,
    // so a burst of updates costs time in proportion to the burst, plus one pass to rebuild the edges.
    void relayout(bool full);
    struct LayoutKey
    {
        qint64 id = 0;
        qint64 parentId = 0;
        int iteration = 0;
    };
    // The full layout's order, node indexes column by column: pure, so big runs compute it on the thread pool.
    static QList<int> columnOrder(const QList<LayoutKey> &nodes);
    void applyOrder(const QList<int> &order);
    void placeAtEnds(const QList<int> &indexes);
    // From the full columns: which nodes collapsed groups hide, the shown columns, the edges and the bounds.
    void arrange();
    bool groupCollapsed(qint64 parentId, int members) const;
    static bool collapsible(NodeState state);
    QPointF centerOfGroup(const Group &group) const;
    QString groupText(const Group &group, bool shortForm) const;
    QString groupTooltip(const Group &group) const;
    void openGroup(qint64 parentId, bool selectFirst);
    void selectEntry(qint64 entry); // a candidate id, or -P for a count node
    // The shown entry at a scene point: a node index (>= 0), ~group (< 0), or NoEntry.
    int entryAt(const QPointF &scenePoint) const;
    static constexpr int NoEntry = std::numeric_limits<int>::min();
    LabelDetail detailFor(const QRectF &deviceBox, const QFontMetrics &bold) const;
    QStringList textOf(const Node &node, LabelDetail detail) const;
    // textOf as drawn in `width` pixels of `bold`: without the root's word, then the score alone, if need be.
    QStringList fitted(const Node &node, LabelDetail detail, double width, const QFontMetrics &bold) const;
    QString scoreText(const Node &node) const;
    void fitReadable();
    double readableScale() const;
    void updateBestPath();
    void paintNodes(QPainter *painter, const QRectF &exposed, double levelOfDetail, const QPalette &palette) const;
    void paintGroupLabel(QPainter *painter, const Group &group, const QRectF &device, LabelDetail detail,
                         const QColor &color) const;
    int nodeAt(const QPointF &scenePoint) const;
    QPointF centerOf(const Node &node) const;
    void scaleBy(double factor);
    void placeButtons();
    struct LegendEntry
    {
        int state = -1; // a NodeState, or -1
        QString glyph;
        QString text;
    };
    struct LegendLayout
    {
        QList<LegendEntry> entries;
        int line = 0, boxSize = 0, textWidth = 0, columnWidth = 0, rows = 0;
        QRect frame; // in the legend strip
    };
    LegendLayout legendLayout(int availableWidth) const;
    friend class BeamGraphLegend;
    void paintLegend(QPainter *painter) const; // into the legend strip below the viewport
    QString tooltipFor(const Node &node) const;
    NodeState stateOf(const Node &node) const;
    QString subtitleOf(const Node &node) const;

    QGraphicsScene *m_scene;
    BeamGraphEdges *m_edges;
    BeamGraphNodes *m_nodeLayer;
    QTimer *m_relayoutTimer;
    QToolButton *m_fitButton;
    QToolButton *m_zoomInButton;
    QToolButton *m_zoomOutButton;
    QToolButton *m_exportButton;
    QToolButton *m_legendButton; // shows or hides the legend strip below the graph (L)
    QWidget *m_legend;
    bool m_legendChosen = false; // the user pressed Legend or L: no more showing or hiding by size
    std::optional<QSet<qint64>> m_matches;
    QList<Node> m_nodes; // arrival order
    QHash<qint64, int> m_nodeOfId; // candidate id -> position in m_nodes
    QList<QList<int>> m_columns; // per iteration, every node top to bottom (the layout order)
    QList<QList<int>> m_shown; // per iteration, what is drawn top to bottom: a node index, or ~group
    QList<Group> m_groups; // the count nodes drawn now
    QHash<qint64, int> m_groupOfParent;
    QHash<qint64, int> m_membersOf; // parent -> pruned or failed children (top of their subtrees)
    QHash<qint64, bool> m_collapseChoice; // per parent, what the user chose (click, Enter, C)
    bool m_collapseChosen = false; // the user pressed Collapse: no more choosing by the run's size
    QToolButton *m_collapseButton;
    QList<qint64> m_bestPath;
    QSet<qint64> m_onBestPath;
    qint64 m_selected = 0;
    qint64 m_explicitBest = 0;
    qint64 m_rootId = 0;
    double m_rootScore = 0;
    int m_latestBeamIteration = -1; // the newest iteration a beam member comes from
    bool m_autoFit = true; // keep the whole graph in view until the user zooms
    bool m_relayoutWhenShown = false;
    bool m_layoutPending = false; // a full layout is running on the thread pool
    qint64 m_layoutGeneration = 0; // bumped by clear(): a layout for nodes that are gone is dropped

public:
    // Runs from this many candidates on are laid out off the GUI thread when loaded.
    static constexpr int AsyncLayoutNodes = 2000;
    bool isLayoutPending() const { return m_layoutPending; }
};

} // namespace autocomp
