#pragma once

#include "model/candidate.h"

#include <QGraphicsView>
#include <QHash>
#include <QList>
#include <QSet>

#include <optional>

class QGraphicsScene;
class QTimer;
class QToolButton;

namespace autocomp {

class BeamGraphEdges;
class BeamGraphNodes;

// The search as a graph: one column per iteration, an edge from each candidate to the one it was derived
// from, nodes colored by state and labelled with their speedup over the root. The beam and the path from
// the root to the best candidate stand out. Live updates are appended and laid out once per burst, so a
// stream of candidates costs one relayout per 50 ms however many arrive.
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
        Failed,    // timeout, crash, rejected, error (machine), no code: told apart by the node's glyph
        CompileError,
        Incorrect,
        Correct,   // correct, its beam selection has not happened yet
        InBeam,
        Duplicate, // not evaluated: the same code as an earlier candidate
        Cancelled, // in flight when the run stopped; redone on resume
        NoHardware,
        Pruned,
    };
    static constexpr int NodeStateCount = int(NodeState::Pruned) + 1;

    explicit BeamGraphView(QWidget *parent = nullptr);
    ~BeamGraphView() override;

    // `bestCandidateId` 0: the correct candidate with the lowest score.
    void setCandidates(const QList<Candidate> &candidates, qint64 bestCandidateId = 0);
    void upsertCandidate(const Candidate &candidate);
    void upsertCandidates(const QList<Candidate> &candidates);
    void setBestCandidate(qint64 candidateId);
    void clear();

    // Selects the node without emitting candidateSelected; false when the graph has no such candidate.
    bool selectCandidate(qint64 candidateId);
    qint64 selectedCandidate() const;
    // Where a key moves the selection: Left the parent, Right the first child, Up and Down the nodes above and
    // below in the same iteration, Home the root, End the run's best; 0 when there is nowhere to go.
    qint64 neighbour(int key);
    // The candidate whose node is under `viewportPos` (viewport coordinates), or 0.
    qint64 candidateAt(const QPoint &viewportPos) const;

    int nodeCount() const { return int(m_nodes.size()); }
    // Root first, best candidate last; empty when there is no correct candidate yet.
    QList<qint64> bestPath() const;
    bool isOnBestPath(qint64 candidateId) const;
    NodeState nodeState(qint64 candidateId) const;
    // The node's center in scene coordinates; null when unknown. Valid after the pending relayout.
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
    friend class BeamGraphNodes;

    struct Node {
        qint64 id = 0;
        qint64 parentId = 0;
        int iteration = 0;
        CandidateStatus status = CandidateStatus::Planning;
        CandidateOrigin origin = CandidateOrigin::Llm;
        double score = 0;
        bool inBeam = false;
        QString word;   // statusWord: what the node says of itself
        std::optional<ScoreInterval> interval;
        QString menuItem;
        QString shortName; // the strategy in a few words (PromptBuilder::shortName), drawn on the node
        int column = -1; // -1: not laid out yet
        int row = 0;
    };

    void store(const Candidate &candidate);
    bool isWithinNoise(const Node &node) const;
    void scheduleRelayout();
    // Full: sorts every column by parent order (a new run). Otherwise new nodes go to the end of their column,
    // so a burst of updates costs time in proportion to the burst, plus one pass to rebuild the edges.
    void relayout(bool full);
    struct LayoutKey {
        qint64 id = 0;
        qint64 parentId = 0;
        int iteration = 0;
    };
    // The full layout's order, node indexes column by column: pure, so big runs compute it on the thread pool.
    static QList<int> columnOrder(const QList<LayoutKey> &nodes);
    void applyOrder(const QList<int> &order);
    void placeAtEnds(const QList<int> &indexes);
    void updateBestPath();
    void paintNodes(QPainter *painter, const QRectF &exposed, double levelOfDetail, const QPalette &palette) const;
    int nodeAt(const QPointF &scenePoint) const;
    QPointF centerOf(const Node &node) const;
    void scaleBy(double factor);
    void placeButtons();
    struct LegendEntry {
        int state = -1; // a NodeState, or -1
        QString glyph;
        QString text;
    };
    struct LegendLayout {
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
    QList<Node> m_nodes;             // arrival order
    QHash<qint64, int> m_nodeOfId;   // candidate id -> position in m_nodes
    QList<QList<int>> m_columns;     // per iteration, the nodes top to bottom
    QList<qint64> m_bestPath;
    QSet<qint64> m_onBestPath;
    qint64 m_selected = 0;
    qint64 m_explicitBest = 0;
    qint64 m_rootId = 0;
    double m_rootScore = 0;
    int m_latestBeamIteration = -1;  // the newest iteration a beam member comes from
    bool m_autoFit = true;           // keep the whole graph in view until the user zooms
    bool m_relayoutWhenShown = false;
    bool m_layoutPending = false;  // a full layout is running on the thread pool
    qint64 m_layoutGeneration = 0; // bumped by clear(): a layout for nodes that are gone is dropped

public:
    // Runs from this many candidates on are laid out off the GUI thread when loaded.
    static constexpr int AsyncLayoutNodes = 2000;
    bool isLayoutPending() const { return m_layoutPending; }
};

} // namespace autocomp
