#pragma once

#include <QWidget>

namespace autocomp {

class BeamGraphView;

// The legend of a BeamGraphView, below the graph's viewport (in the view's bottom margin), so it never covers a
// node. The view lays it out and paints it (BeamGraphView::paintLegend); objectName graphLegendPanel.
class BeamGraphLegend : public QWidget
{
public:
    explicit BeamGraphLegend(BeamGraphView *view);

protected:
    void paintEvent(QPaintEvent *) override;

private:
    BeamGraphView *m_view;
};

} // namespace autocomp
