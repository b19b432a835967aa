#include "charts/image_export.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QGraphicsScene>
#include <QImage>
#include <QMessageBox>
#include <QPainter>
#include <QSvgGenerator>

#include <algorithm>

namespace autocomp {

QString ImageExport::fileFilter() { return QObject::tr("PNG image (*.png);;SVG drawing (*.svg)"); }

bool ImageExport::save(QGraphicsScene *scene, const QRectF &source, const QString &path, const QColor &background,
                       QString *error, double scale)
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (!scene || source.isEmpty()) {
        *error = QObject::tr("%1: there is nothing to draw").arg(path);
        return false;
    }
    if (suffix == QLatin1String("svg")) {
        QSvgGenerator svg;
        svg.setFileName(path);
        svg.setSize(source.size().toSize());
        svg.setViewBox(QRectF(QPointF(0, 0), source.size()));
        svg.setTitle(QFileInfo(path).completeBaseName());
        svg.setDescription(QObject::tr("Drawn by Autocomp Workbench"));
        QPainter painter;
        if (!painter.begin(&svg)) {
            *error = QObject::tr("%1: cannot be written").arg(path);
            return false;
        }
        painter.fillRect(QRectF(QPointF(0, 0), source.size()), background);
        scene->render(&painter, QRectF(QPointF(0, 0), source.size()), source);
        painter.end();
        if (!QFileInfo::exists(path) || QFileInfo(path).size() == 0) {
            *error = QObject::tr("%1: cannot be written").arg(path);
            return false;
        }
        return true;
    }
    if (suffix != QLatin1String("png")) {
        *error = QObject::tr("%1: name the file .png or .svg").arg(path);
        return false;
    }
    const double limit = 16384.0 / std::max(source.width(), source.height());
    const double factor = std::min(scale, limit);
    QImage image((source.size() * factor).toSize(), QImage::Format_ARGB32_Premultiplied);
    image.fill(background);
    {
        QPainter painter(&image);
        painter.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
        scene->render(&painter, QRectF(QPointF(0, 0), QSizeF(image.size())), source);
    }
    if (!image.save(path, "PNG")) {
        *error = QObject::tr("%1: cannot be written").arg(path);
        return false;
    }
    return true;
}

void ImageExport::saveWithDialog(QWidget *parent, QGraphicsScene *scene, const QRectF &source,
                                 const QString &suggestedName, const QColor &background)
{
    QString filter;
    const QString path = QFileDialog::getSaveFileName(parent, QObject::tr("Export Image"), suggestedName, fileFilter(),
                                                      &filter);
    if (path.isEmpty())
        return;
    QString target = path;
    if (QFileInfo(target).suffix().isEmpty())
        target += filter.contains(QLatin1String("svg")) ? QStringLiteral(".svg") : QStringLiteral(".png");
    QString error;
    if (!save(scene, source, target, background, &error))
        QMessageBox::warning(parent, QObject::tr("Export Image"), error);
}

} // namespace autocomp
