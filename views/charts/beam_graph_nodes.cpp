#include "charts/beam_graph_nodes.h"

#include "charts/beam_graph_view.h"

#include <QApplication>
#include <QPainter>
#include <QStyleOptionGraphicsItem>

namespace autocomp {

void BeamGraphNodes::setBounds(const QRectF &bounds)
{
    if (bounds != m_bounds) {
        prepareGeometryChange();
        m_bounds = bounds;
    }
    update();
}

void BeamGraphNodes::paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget)
{
    m_view->paintNodes(painter, option->exposedRect, option->levelOfDetailFromTransform(painter->worldTransform()),
                       widget ? widget->palette() : QApplication::palette());
}

} // namespace autocomp
