#pragma once

#include <QGraphicsItem>
#include <QImage>
#include <QList>
#include <QPointF>

#include <functional>

QT_BEGIN_NAMESPACE
class QAbstractSeries;
class QChart;
QT_END_NAMESPACE

namespace autocomp {

// The latency chart's points, painted by the chart itself instead of Qt Charts: Qt Charts repaints every
// marker of a series whenever one point is added, which stalls a 10,000-point chart. Here the points are drawn
// once into an image of the plot area and each new point onto it; the image is redrawn whole only when the plot
// area or an axis range changes. Qt Charts keeps the axes, the lines and the legend; hovering and clicking a
// point are reported through the callbacks.
class ChartPointLayer : public QGraphicsItem
{
public:
    struct PointSet
    {
        const QList<QPointF> *values = nullptr; // in the axes' values, owned by the chart
        QAbstractSeries *series = nullptr; // an (empty) series attached to the axes the values are on
        QImage marker;
    };

    explicit ChartPointLayer(QChart *chart);

    void setPointSets(const QList<PointSet> &sets);
    // Points were appended to the sets: drawn onto the image at the next paint.
    void pointsAppended();
    // The mapping changed (axes, plot area) or points were replaced: the image is drawn again.
    void invalidate();

    // The point nearest to `scenePos` within a few pixels: (set, index), or (-1, -1).
    std::pair<int, qsizetype> pointAt(const QPointF &scenePos) const;

    std::function<void(int set, qsizetype index, bool hovered)> onHovered;
    std::function<void(int set, qsizetype index)> onClicked;

    QRectF boundingRect() const override;
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override;

protected:
    void hoverMoveEvent(QGraphicsSceneHoverEvent *event) override;
    void hoverLeaveEvent(QGraphicsSceneHoverEvent *event) override;
    void mousePressEvent(QGraphicsSceneMouseEvent *event) override;

private:
    void drawPoints(QPainter &painter, int set, qsizetype from);

    QChart *m_chart;
    QList<PointSet> m_sets;
    QList<qsizetype> m_drawn; // how many points of each set the image holds
    QImage m_image;
    QRectF m_imageRect; // the plot area the image was drawn for
    bool m_valid = false;
    std::pair<int, qsizetype> m_hovered{-1, -1};
};

} // namespace autocomp
