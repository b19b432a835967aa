#include "common/status_palette.h"

#include <QHash>
#include <QPainter>
#include <QPalette>
#include <QPixmap>

namespace autocomp {

bool StatusPalette::isDark(const QPalette &palette) { return palette.color(QPalette::Base).lightness() < 128; }

QColor StatusPalette::foreground(CandidateStatus status, const QPalette &palette)
{
    const bool dark = isDark(palette);
    switch (status) {
    case CandidateStatus::Correct: return dark ? QColor(0x6c, 0xd6, 0x7a) : QColor(0x1b, 0x7a, 0x2e);
    case CandidateStatus::Incorrect: return dark ? QColor(0xff, 0x8a, 0x80) : QColor(0xc6, 0x28, 0x28);
    case CandidateStatus::CompileError: return dark ? QColor(0xff, 0xab, 0x70) : QColor(0xb3, 0x4a, 0x00);
    case CandidateStatus::Failed: return dark ? QColor(0xe5, 0x73, 0x9b) : QColor(0x9c, 0x1b, 0x4a);
    case CandidateStatus::NoHardware: // compiled, not run: neither good nor bad
        return dark ? QColor(0xb0, 0xa8, 0xd0) : QColor(0x5a, 0x4e, 0x80);
    case CandidateStatus::Duplicate: // not evaluated again: its original's verdict
        return dark ? QColor(0x7f, 0xc8, 0xcf) : QColor(0x1f, 0x6f, 0x77);
    case CandidateStatus::Cancelled: // no verdict; redone on resume
        return dark ? QColor(0xa0, 0xa0, 0xa0) : QColor(0x80, 0x80, 0x80);
    case CandidateStatus::Planning:
    case CandidateStatus::Coding:
    case CandidateStatus::Pending:
    case CandidateStatus::Compiling:
    case CandidateStatus::Testing:
    case CandidateStatus::Benchmarking: break;
    }
    return {};
}

QIcon StatusPalette::icon(CandidateStatus status, const QPalette &palette)
{
    const bool dark = isDark(palette);
    static QHash<int, QIcon> s_cache;
    const int key = static_cast<int>(status) * 2 + (dark ? 1 : 0);
    auto it = s_cache.constFind(key);
    if (it != s_cache.constEnd())
        return *it;

    QColor color = foreground(status, palette);
    const bool inProgress = !color.isValid();
    if (inProgress)
        color = dark ? QColor(0x90, 0xa4, 0xc8) : QColor(0x4a, 0x63, 0x94);
    QPixmap pixmap(32, 32);
    pixmap.fill(Qt::transparent);
    {
        QPainter painter(&pixmap);
        painter.setRenderHint(QPainter::Antialiasing);
        // A shape as well as a colour: verdicts are dots, a duplicate a square, work in flight and cancelled
        // work rings (cancelled one dashed).
        if (inProgress || status == CandidateStatus::Cancelled) {
            painter.setPen(QPen(color, 4, status == CandidateStatus::Cancelled ? Qt::DotLine : Qt::SolidLine));
            painter.setBrush(Qt::NoBrush);
        } else {
            painter.setPen(Qt::NoPen);
            painter.setBrush(color);
        }
        if (status == CandidateStatus::Duplicate)
            painter.drawRect(QRectF(7, 7, 18, 18));
        else
            painter.drawEllipse(QRectF(6, 6, 20, 20));
    }
    QIcon icon(pixmap);
    s_cache.insert(key, icon);
    return icon;
}

} // namespace autocomp
