// BeamGraphView's painting: the nodes at the detail the zoom allows, their labels, and the legend. The class is
// declared in beam_graph_view.h.
#include "charts/beam_graph_view.h"

#include "charts/beam_graph_grid.h"
#include "common/status_palette.h"
#include "common/value_format.h"

#include <QApplication>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace autocomp {

using namespace beam_graph;

namespace {

// A node's (or a collapsed group's) rounded box, with the dashed ring of the selection around it.
void drawNodeBox(QPainter *painter, const QRectF &box, const QPen &pen, const QColor &fill, bool selected,
                 const QColor &highlight)
{
    painter->setPen(pen);
    painter->setBrush(fill);
    painter->drawRoundedRect(box, 5, 5);
    if (selected) {
        painter->setPen(QPen(highlight, 2.5, Qt::DashLine));
        painter->setBrush(Qt::NoBrush);
        painter->drawRoundedRect(box.adjusted(-3, -3, 3, 3), 7, 7);
    }
}

} // namespace

double BeamGraphView::readableScale() const
{
    // The box as high as one line of the bold label and as wide as "#id  score" in the view's font.
    QFont bold = font();
    bold.setBold(true);
    const QFontMetrics metrics(bold);
    return std::max((metrics.height() + 2) / s_nodeHeight,
                    (metrics.horizontalAdvance(QStringLiteral("#000  00.00×")) + 16) / s_nodeWidth);
}

BeamGraphView::LabelDetail BeamGraphView::detailFor(const QRectF &deviceBox, const QFontMetrics &bold) const
{
    const int line = bold.height();
    if (deviceBox.height() < MinTextHeight)
        return LabelDetail::None;
    if (deviceBox.height() >= 2 * line + 2 && deviceBox.width() >= 10 * bold.averageCharWidth())
        return LabelDetail::Full;
    if (deviceBox.height() >= line)
        return LabelDetail::IdAndScore;
    return LabelDetail::ScoreOnly;
}

BeamGraphView::LabelDetail BeamGraphView::labelDetail() const
{
    QFont bold = font();
    bold.setBold(true);
    const double scale = transform().m11();
    return detailFor(QRectF(0, 0, s_nodeWidth * scale, s_nodeHeight * scale), QFontMetrics(bold));
}

QString BeamGraphView::scoreText(const Node &node) const
{
    if (node.status == CandidateStatus::Correct && node.score > 0 && m_rootScore > 0)
        return ValueFormat::speedup(m_rootScore / node.score);
    return glyphOf(node.word);
}

QStringList BeamGraphView::textOf(const Node &node, LabelDetail detail) const
{
    // The lines as drawn; the width of "#id  score" is checked where it is drawn (paintNodes, nodeText).
    switch (detail) {
    case LabelDetail::None: return {};
    case LabelDetail::ScoreOnly: return {scoreText(node)};
    case LabelDetail::IdAndScore:
    case LabelDetail::Full: {
        QString title = QLatin1Char('#') + QString::number(node.id);
        if (node.origin == CandidateOrigin::Root)
            title += QLatin1String(" root");
        if (node.status == CandidateStatus::Correct && node.score > 0 && m_rootScore > 0)
            title += QLatin1String("  ") + ValueFormat::speedup(m_rootScore / node.score);
        if (detail == LabelDetail::IdAndScore)
            return {title};
        return {title, subtitleOf(node)};
    }
    }
    return {};
}

QStringList BeamGraphView::nodeText(qint64 candidateId) const
{
    const auto it = m_nodeOfId.constFind(candidateId);
    if (it == m_nodeOfId.constEnd() || m_nodes.at(*it).row < 0 || m_nodes.at(*it).column < 0)
        return {};
    const Node &node = m_nodes.at(*it);
    QFont bold = font();
    bold.setBold(true);
    const QFontMetrics metrics(bold);
    return fitted(node, labelDetail(), s_nodeWidth * transform().m11() - 14, metrics);
}

QStringList BeamGraphView::fitted(const Node &node, LabelDetail detail, double width, const QFontMetrics &bold) const
{
    QStringList lines = textOf(node, detail);
    if (detail == LabelDetail::ScoreOnly || detail == LabelDetail::None
        || bold.horizontalAdvance(lines.first()) <= width + 4)
        return lines;
    // Too narrow: the root's word goes first, then the id (the score alone).
    if (node.origin == CandidateOrigin::Root) {
        lines.first().remove(QLatin1String(" root"));
        if (bold.horizontalAdvance(lines.first()) <= width + 4)
            return lines;
    }
    return textOf(node, LabelDetail::ScoreOnly);
}

void BeamGraphView::paintNodes(QPainter *painter, const QRectF &exposed, double lod, const QPalette &palette) const
{
    if (m_shown.isEmpty())
        return;
    painter->setRenderHint(QPainter::Antialiasing, lod >= 0.2);
    const bool dark = StatusPalette::isDark(palette);
    const QColor best(0xff, 0x8f, 0x00);
    const QColor highlight = palette.color(QPalette::Highlight);
    const QPen plainPen(dark ? QColor(0x9a, 0xa0, 0xa8) : QColor(0x70, 0x76, 0x80), 1);
    const QPen beamPen(dark ? QColor(0x8a, 0xb4, 0xff) : QColor(0x1a, 0x4f, 0xb8), 2.5);
    const QPen bestPen(best, 3);
    const QPen groupPen(dark ? QColor(0x9a, 0xa0, 0xa8) : QColor(0x70, 0x76, 0x80), 1.2, Qt::DashLine);
    const int firstColumn = std::max(0, int(std::floor((exposed.left() - s_nodeWidth) / s_columnPitch)));
    const int lastColumn = std::min(int(m_shown.size()) - 1,
                                    int(std::ceil((exposed.right() + s_nodeWidth) / s_columnPitch)));
    const int firstRow = std::max(0, int(std::floor((exposed.top() - s_nodeHeight) / s_rowPitch)));
    const int lastRow = int(std::ceil((exposed.bottom() + s_nodeHeight) / s_rowPitch));
    // Labels are drawn in device pixels with the view's font: zoomed out they are left out, never shrunk to
    // an unreadable size (the score last).
    const QFont normal = painter->font();
    QFont bold = normal;
    bold.setBold(true);
    const QFontMetrics metrics(normal);
    const QFontMetrics boldMetrics(bold);
    const QTransform world = painter->worldTransform();
    const auto textColor = [](const QColor &fill) {
        return fill.lightness() < 110 ? QColor(Qt::white) : QColor(0x10, 0x14, 0x18);
    };
    for (int c = firstColumn; c <= lastColumn; ++c) {
        const QList<int> &column = m_shown.at(c);
        for (int r = firstRow; r <= std::min(lastRow, int(column.size()) - 1); ++r) {
            const int entry = column.at(r);
            const QRectF box(QPointF(c * s_columnPitch, r * s_rowPitch) - QPointF(s_nodeWidth / 2, s_nodeHeight / 2),
                             QSizeF(s_nodeWidth, s_nodeHeight));
            const QRectF device = world.mapRect(box);
            const LabelDetail detail = detailFor(device, boldMetrics);
            if (entry < 0) {
                // A count node: the pruned and failed subtrees of one parent.
                const Group &group = m_groups.at(~entry);
                const bool selected = m_selected == -group.parentId;
                painter->setOpacity(1.0);
                const QColor fill = stateColor(group.pruned == group.count ? NodeState::Pruned : NodeState::Failed,
                                               palette);
                if (lod < 0.2) {
                    painter->fillRect(box, selected ? highlight : fill);
                    continue;
                }
                drawNodeBox(painter, box, groupPen, fill, selected, highlight);
                if (detail == LabelDetail::None)
                    continue;
                paintGroupLabel(painter, group, device, detail, textColor(fill));
                continue;
            }
            const Node &node = m_nodes.at(entry);
            const NodeState state = stateOf(node);
            const QColor fill = stateColor(state, palette);
            const bool onBest = m_onBestPath.contains(node.id);
            const bool selected = node.id == m_selected;
            painter->setOpacity(isDimmed(node.id) && !selected ? 0.22 : 1.0);
            if (lod < 0.2) {
                // Far out: a colored block is all one can see; color only for what must stand out.
                painter->fillRect(box, selected ? highlight : onBest ? best : fill);
                continue;
            }
            drawNodeBox(painter, box, onBest ? bestPen : node.inBeam ? beamPen : plainPen, fill, selected, highlight);
            if (detail == LabelDetail::None)
                continue;
            const QRectF inner = device.adjusted(7, 1, -7, -1);
            const QStringList lines = fitted(node, detail, inner.width(), boldMetrics);
            const LabelDetail drawn = detail == LabelDetail::Full && lines.size() == 2 ? LabelDetail::Full
                : lines.size() == 1 && lines.first().startsWith(QLatin1Char('#'))      ? LabelDetail::IdAndScore
                                                                                       : LabelDetail::ScoreOnly;
            QString glyph = glyphOf(node.word);
            if (glyph.isEmpty() && isWithinNoise(node))
                glyph = QStringLiteral("≈");
            painter->save();
            painter->resetTransform();
            painter->setPen(textColor(fill));
            painter->setFont(bold);
            if (drawn == LabelDetail::ScoreOnly) {
                if (device.height() < boldMetrics.height()) {
                    QFont small = bold;
                    small.setPixelSize(std::max(6, int(device.height()) - 2));
                    painter->setFont(small);
                }
                painter->drawText(device, Qt::AlignCenter, lines.value(0));
            } else {
                const QRectF top = drawn == LabelDetail::Full
                    ? QRectF(inner.left(), inner.top(), inner.width(), inner.height() / 2)
                    : inner;
                if (!glyph.isEmpty())
                    painter->drawText(top, Qt::AlignRight | Qt::AlignVCenter, glyph);
                painter->drawText(top, Qt::AlignLeft | Qt::AlignVCenter, lines.first());
                if (drawn == LabelDetail::Full) {
                    painter->setFont(normal);
                    painter->drawText(QRectF(inner.left(), inner.center().y(), inner.width(), inner.height() / 2),
                                      Qt::AlignLeft | Qt::AlignVCenter,
                                      metrics.elidedText(lines.value(1), Qt::ElideRight, int(inner.width())));
                }
            }
            painter->restore();
        }
    }
    painter->setOpacity(1.0);
}

// A count node's label in device pixels: "+17 pruned" (short or long, as the box allows), or at full detail the
// pruned and failed counts on a line each (one kind: what a click does below it).
void BeamGraphView::paintGroupLabel(QPainter *painter, const Group &group, const QRectF &device, LabelDetail detail,
                                    const QColor &color) const
{
    const QFont normal = painter->font();
    QFont bold = normal;
    bold.setBold(true);
    const QFontMetrics metrics(normal);
    const QFontMetrics boldMetrics(bold);
    painter->save();
    painter->resetTransform();
    painter->setPen(color);
    painter->setFont(bold);
    const QRectF inner = device.adjusted(6, 1, -6, -1);
    const QString text = groupText(group,
                                   detail == LabelDetail::ScoreOnly
                                       || boldMetrics.horizontalAdvance(groupText(group, false)) > inner.width());
    if (detail == LabelDetail::Full) {
        // Pruned and failed on a line each; one kind: what a click does below it.
        const int failed = group.count - group.pruned;
        const QString first = group.pruned > 0 && failed > 0 ? tr("+%1 pruned").arg(group.pruned)
                                                             : groupText(group, false);
        const QString second = group.pruned > 0 && failed > 0 ? tr("+%1 failed").arg(failed) : tr("click to show");
        painter->drawText(QRectF(inner.left(), inner.top(), inner.width(), inner.height() / 2),
                          Qt::AlignLeft | Qt::AlignVCenter,
                          boldMetrics.elidedText(first, Qt::ElideRight, int(inner.width())));
        painter->setFont(group.pruned > 0 && failed > 0 ? bold : normal);
        painter->drawText(QRectF(inner.left(), inner.center().y(), inner.width(), inner.height() / 2),
                          Qt::AlignLeft | Qt::AlignVCenter,
                          metrics.elidedText(second, Qt::ElideRight, int(inner.width())));
    } else {
        if (detail == LabelDetail::ScoreOnly) {
            QFont small = bold;
            small.setPixelSize(std::max(6, std::min(boldMetrics.height(), int(device.height())) - 2));
            painter->setFont(small);
        }
        painter->drawText(inner, Qt::AlignCenter, text);
    }
    painter->restore();
}

QString BeamGraphView::subtitleOf(const Node &node) const
{
    const NodeState state = stateOf(node);
    if (!node.shortName.isEmpty()
        && (state == NodeState::InBeam || state == NodeState::Correct || state == NodeState::Pruned))
        return node.shortName;
    const QString name = state == NodeState::Failed || state == NodeState::Cancelled ? node.word : stateName(state);
    return name + (node.shortName.isEmpty() ? QString() : QStringLiteral(" · ") + node.shortName);
}

QString BeamGraphView::nodeSubtitle(qint64 candidateId) const
{
    const auto it = m_nodeOfId.constFind(candidateId);
    return it == m_nodeOfId.constEnd() ? QString() : subtitleOf(m_nodes.at(*it));
}

BeamGraphView::LegendLayout BeamGraphView::legendLayout(int availableWidth) const
{
    LegendLayout layout;
    const QFontMetrics metrics(font());
    layout.line = metrics.height() + 2;
    layout.boxSize = metrics.height() - 4;
    // The states (a coloured box each), the best path and the beam border, then the glyphs that tell the kinds of
    // failure apart and mark a child within noise of its parent.
    for (int s = 0; s < NodeStateCount; ++s)
        layout.entries.append({s, {}, stateName(NodeState(s))});
    layout.entries.append({-1, QStringLiteral("best"), tr("best path")});
    layout.entries.append({-1, QStringLiteral("beam"), tr("beam member")});
    for (const char *word : {"crash", "timeout", "rejected", "error (machine)", "no code"})
        layout.entries.append({-1, glyphOf(QString::fromLatin1(word)), tr(word)});
    layout.entries.append({-1, QStringLiteral("≈"), tr("within noise of parent")});
    for (const LegendEntry &entry : std::as_const(layout.entries))
        layout.textWidth = std::max(layout.textWidth, metrics.horizontalAdvance(entry.text));
    // As many columns (up to four) as the view has room for.
    layout.columnWidth = layout.textWidth + layout.boxSize + 20;
    const int columns = std::clamp((availableWidth - 24) / layout.columnWidth, 1, 6);
    layout.rows = int((layout.entries.size() + columns - 1) / columns);
    layout.frame = QRect(4, 4, columns * layout.columnWidth + 8, layout.rows * layout.line + 8);
    return layout;
}

void BeamGraphView::paintLegend(QPainter *painter) const
{
    painter->save();
    painter->setRenderHint(QPainter::Antialiasing);
    const QFontMetrics metrics(font());
    painter->setFont(font());
    const LegendLayout layout = legendLayout(m_legend->width());
    const QList<LegendEntry> &entries = layout.entries;
    const int line = layout.line, boxSize = layout.boxSize, width = layout.textWidth, rows = layout.rows,
              columnWidth = layout.columnWidth;
    const QRect frame = layout.frame;
    QColor background = palette().color(QPalette::Base);
    background.setAlpha(225);
    painter->setPen(palette().color(QPalette::Mid));
    painter->setBrush(background);
    painter->drawRoundedRect(frame, 4, 4);
    // Entries fill the first column, then the next.
    const auto cell = [&](int entry) {
        return QPoint(frame.left() + 8 + (entry / rows) * columnWidth, frame.top() + 4 + (entry % rows) * line);
    };
    for (int i = 0; i < entries.size(); ++i) {
        const LegendEntry &entry = entries.at(i);
        const QPoint at = cell(i);
        const QRect box(at.x(), at.y() + 3, boxSize, boxSize);
        if (entry.state >= 0) {
            painter->setPen(palette().color(QPalette::Mid));
            painter->setBrush(stateColor(NodeState(entry.state), palette()));
            painter->drawRect(box);
        } else if (entry.glyph == QLatin1String("best")) {
            painter->setPen(QPen(QColor(0xff, 0x8f, 0x00), 3));
            painter->drawLine(at.x(), at.y() + line / 2, at.x() + boxSize, at.y() + line / 2);
        } else if (entry.glyph == QLatin1String("beam")) {
            painter->setBrush(Qt::NoBrush);
            painter->setPen(
                QPen(StatusPalette::isDark(palette()) ? QColor(0x8a, 0xb4, 0xff) : QColor(0x1a, 0x4f, 0xb8), 2.5));
            painter->drawRect(box);
        } else {
            painter->setPen(palette().color(QPalette::Text));
            painter->drawText(QRect(at.x(), at.y(), boxSize + 4, line), Qt::AlignCenter, entry.glyph);
        }
        painter->setPen(palette().color(QPalette::Text));
        painter->drawText(QRect(at.x() + boxSize + 6, at.y(), width + 4, line), Qt::AlignVCenter, entry.text);
    }
    painter->restore();
}

} // namespace autocomp
