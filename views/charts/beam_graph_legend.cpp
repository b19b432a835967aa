#include "charts/beam_graph_legend.h"

#include "charts/beam_graph_view.h"

#include <QPainter>

namespace autocomp {

BeamGraphLegend::BeamGraphLegend(BeamGraphView *view) : QWidget(view), m_view(view)
{
    setObjectName(QStringLiteral("graphLegendPanel"));
    setAttribute(Qt::WA_OpaquePaintEvent);
}

void BeamGraphLegend::paintEvent(QPaintEvent *)
{
    QPainter painter(this);
    painter.fillRect(rect(), palette().color(QPalette::Base));
    m_view->paintLegend(&painter);
}

} // namespace autocomp
