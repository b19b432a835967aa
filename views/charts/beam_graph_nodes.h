#pragma once

#include <QGraphicsItem>

namespace autocomp {

class BeamGraphView;

// All nodes of a BeamGraphView in one item. The layout is a grid, so the nodes in an exposed rectangle are found
// by arithmetic and a paint touches only those; 10,000 QGraphicsItems would cost memory and a sort of all of them
// per paint. The view paints them (BeamGraphView::paintNodes); this item holds their bounds.
class BeamGraphNodes : public QGraphicsItem
{
public:
    explicit BeamGraphNodes(const BeamGraphView *view) : m_view(view) {}

    QRectF boundingRect() const override { return m_bounds; }
    // Repaints, and tells the scene first when the bounds change.
    void setBounds(const QRectF &bounds);
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override;

private:
    const BeamGraphView *m_view;
    QRectF m_bounds;
};

} // namespace autocomp
