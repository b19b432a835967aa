#pragma once

#include <QColor>
#include <QRectF>
#include <QString>

class QGraphicsScene;
class QWidget;

namespace autocomp {

// Saves a picture of a graphics scene (a chart, the beam graph) as PNG or SVG, chosen by the file's suffix.
class ImageExport
{
public:
    // The file dialog's filter for the formats save() writes.
    static QString fileFilter();
    // Renders `source` of `scene` into `path`: .png at `scale` (capped so no side exceeds 16384 pixels) on
    // `background`, or .svg (vector, same geometry). False with a message naming the file otherwise.
    static bool save(QGraphicsScene *scene, const QRectF &source, const QString &path, const QColor &background,
                     QString *error, double scale = 2.0);
    // Asks for a file name (PNG or SVG) under `parent` and saves; reports a failure in a message box.
    static void saveWithDialog(QWidget *parent, QGraphicsScene *scene, const QRectF &source,
                               const QString &suggestedName, const QColor &background);
};

} // namespace autocomp
