#pragma once

#include <QAbstractTableModel>
#include <QList>
#include <QString>

namespace autocomp {

// An agent's optimization menu as an editable table: whether the item is offered, and its text.
class MenuModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Columns { EnabledColumn, TextColumn, ColumnCount };
    enum Roles { SortRole = Qt::UserRole };

    struct Item {
        QString text;
        bool enabled = true;
        bool operator==(const Item &other) const = default;
    };

    explicit MenuModel(QObject *parent = nullptr);

    void setItems(const QList<Item> &items);
    QList<Item> items() const { return m_items; }
    QStringList enabledItems() const;
    QStringList disabledItems() const;

    // Appends an item and returns its row.
    int addItem(const QString &text);
    // Moves `row` by `delta` rows (-1 up, +1 down); false at the ends.
    bool moveItem(int row, int delta);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    bool setData(const QModelIndex &index, const QVariant &value, int role = Qt::EditRole) override;
    Qt::ItemFlags flags(const QModelIndex &index) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    bool insertRows(int row, int count, const QModelIndex &parent = {}) override;
    bool removeRows(int row, int count, const QModelIndex &parent = {}) override;
    bool moveRows(const QModelIndex &sourceParent, int sourceRow, int count, const QModelIndex &destinationParent,
                  int destinationChild) override;

Q_SIGNALS:
    // Any change a user made: text, enabled state, rows added, removed or moved.
    void edited();

private:
    QList<Item> m_items;
};

} // namespace autocomp
