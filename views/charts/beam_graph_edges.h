#pragma once

#include <QFutureWatcher>
#include <QGraphicsItem>
#include <QImage>
#include <QList>
#include <QPen>
#include <QTransform>

namespace autocomp {

// The edges of a big graph seen zoomed out, drawn into an image: `drawn` edges of list `generation`, at `transform`.
struct EdgeImage
{
    QImage image;
    QTransform transform;
    QRect target; // where the image goes, in the view's coordinates
    QPen pen;
    qsizetype drawn = 0;
    quint64 generation = 0;

    bool fits(const QTransform &t, const QRect &r, const QPen &p, quint64 g) const
    {
        return !image.isNull() && transform == t && target == r && pen == p && generation == g;
    }
    // Pure, for the thread pool: every edge drawn into a new transparent image of `target`'s size.
    static EdgeImage render(const QList<QLineF> &edges, const QTransform &transform, const QRect &target,
                            const QPen &pen, qreal ratio, quint64 generation);
    // Draws edges [from, end) onto the image; `drawn` becomes the list's size.
    void drawLines(const QList<QLineF> &edges, qsizetype from);
};

// All edges of a BeamGraphView in one item: thousands of line items would dominate memory and scene bookkeeping.
// Curved while there are few, straight lines above that; zoomed out, drawn from an image rendered on the thread
// pool. `owner` parents the watcher of that rendering; the destructor waits for a rendering in flight.
class BeamGraphEdges : public QGraphicsItem
{
public:
    explicit BeamGraphEdges(QObject *owner);
    ~BeamGraphEdges() override;

    QRectF boundingRect() const override { return m_bounds; }
    // Every edge, and those of the path to the best candidate (drawn over them, highlighted).
    void setEdges(QList<QLineF> edges, QList<QLineF> bestEdges);
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override;

private:
    bool paintImage(QPainter *painter, const QPen &pen);
    void draw(QPainter *painter, const QList<QLineF> &edges, const QRectF &exposed) const;

    QList<QLineF> m_edges;
    QList<QLineF> m_bestEdges;
    QRectF m_bounds;
    bool m_curved = true;
    quint64 m_generation = 0; // of the edge list: a change other than an append makes a new one
    EdgeImage m_image;
    QFutureWatcher<EdgeImage> *m_watcher;
};

} // namespace autocomp
